//! One deterministic host for a [`Wrapper`], in the spirit of quinn-proto's test `Pair`:
//! it takes what the wrapper hands out in the order it happened, runs scripted deferred
//! and adapter tools, and keeps the clock; named starting states ([`idle`], [`busy`],
//! [`busy_without_end`]) build a wrapper's history, as smoltcp's `socket_established()`
//! builds a socket's.
//!
//! * [`Storage`] owns what a wrapper borrows (its slots and arena), sized from a [`WrapperConfig`].
//! * [`Recorder`] is a [`Hooks`] that keeps every hook event, with its `seq`.
//! * [`Host`] serves one wrapper from its creation on: [`Host::drive`] takes every frame,
//!   hook event and started call into a log of [`Entry`]s (a hook whose `seq` is `n` comes
//!   right after the `n`-th frame), running the [`Script`]s it was given on the calls that
//!   start; [`Host::pop_frame`], [`Host::pop_frames`] and [`Host::skip_events`] are the lean
//!   forms that allocate nothing, for benches and the no-heap test.
//!
//! A `Host` counts the frames it took, and a hook's `seq` counts the frames its wrapper
//! queued since it was built: so one host per wrapper, from the start.

use polyweave_tool_adapter::BufferTooSmall;
use polyweave_tool_adapter::CallOutcome;
use polyweave_tool_adapter::{CallInfo, Hooks, NoHooks};
use polyweave_tool_adapter::{HookEvent, Log, Logged};
use polyweave_tool_adapter::{ResultWriter, ToolFailed};
use std::collections::VecDeque;

use polyweave_tool_adapter::wrapper::{
    Disposition, Event, Output, PendingKind, Slot, Wrapper, WrapperConfig,
};
use polyweave_tool_adapter::StorageError;
use polyweave_tool_adapter::{CallHandle, Instant, Route, Tool};

use crate::drive::echo;

// =====================================================================
// Storage
// =====================================================================

/// The memory one wrapper borrows: its pending-call slots and its arena.
#[derive(Clone, Debug)]
pub struct Storage {
    cfg: WrapperConfig,
    slots: Vec<Slot>,
    arena: Vec<u8>,
}

impl Storage {
    /// `slots` pending-call slots and an arena of `cfg.arena_len(slots)` bytes.
    pub fn new(cfg: WrapperConfig, slots: usize) -> Self {
        Storage {
            cfg,
            slots: vec![Slot::EMPTY; slots],
            arena: vec![0; cfg.arena_len(slots)],
        }
    }

    /// A wrapper over `tools` in this storage; panics when [`Wrapper::new`] refuses.
    pub fn wrapper<'a, H: Hooks>(&'a mut self, tools: &'a [Tool<'a>], hooks: H) -> Wrapper<'a, H> {
        self.try_wrapper(tools, hooks)
            .unwrap_or_else(|e| panic!("cannot build the wrapper: {e:?}"))
    }

    /// A wrapper over `tools` in this storage, or why [`Wrapper::new`] refused.
    pub fn try_wrapper<'a, H: Hooks>(
        &'a mut self,
        tools: &'a [Tool<'a>],
        hooks: H,
    ) -> Result<Wrapper<'a, H>, StorageError> {
        Wrapper::new(self.cfg, tools, hooks, &mut self.slots, &mut self.arena)
    }
}

// =====================================================================
// What the host records
// =====================================================================

/// A call as a hook saw it: an owned [`CallInfo`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    /// The call's number.
    pub index: u32,
    /// The decoded tool name (`None`: a malformed call).
    pub name: Option<String>,
    /// The decoded id.
    pub id: Option<String>,
    /// Raw JSON args.
    pub args: Vec<u8>,
    /// Frames the wrapper had queued when the hook fired.
    pub seq: u64,
}

impl From<&CallInfo<'_>> for Call {
    fn from(c: &CallInfo<'_>) -> Self {
        Call {
            index: c.index,
            name: c.name.map(str::to_string),
            id: c.id.map(str::to_string),
            args: c.args.to_vec(),
            seq: c.seq,
        }
    }
}

/// How a call ended: an owned [`CallOutcome`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The raw JSON result.
    Result(Vec<u8>),
    /// The error message.
    Error(String),
}

impl From<CallOutcome<'_>> for Outcome {
    fn from(o: CallOutcome<'_>) -> Self {
        match o {
            CallOutcome::Result(r) => Outcome::Result(r.to_vec()),
            CallOutcome::Error(e) => Outcome::Error(e.to_string()),
        }
    }
}

/// A call `poll_event` announced: an owned [`Event::CallStarted`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Started {
    /// Its handle.
    pub handle: CallHandle,
    /// Deferred or adapter.
    pub kind: PendingKind,
    /// Index of its tool in the registration slice.
    pub tool: usize,
    /// The tool name.
    pub name: String,
    /// The call id.
    pub id: Option<String>,
    /// Raw JSON args, compact.
    pub args: Vec<u8>,
}

impl From<Event<'_>> for Started {
    fn from(e: Event<'_>) -> Self {
        let Event::CallStarted {
            handle,
            kind,
            tool,
            name,
            id,
            args,
        } = e;
        Started {
            handle,
            kind,
            tool,
            name: name.to_string(),
            id: id.map(str::to_string),
            args: args.to_vec(),
        }
    }
}

/// One thing the wrapper did, as [`Host::drive`] logs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Entry {
    /// A frame from `poll_transmit`: the wrapper's `n`-th (from 1), where it goes, its bytes.
    Frame {
        /// Its number, counted since the wrapper was built.
        n: u64,
        /// Where it goes.
        route: Route,
        /// The frame.
        bytes: Vec<u8>,
    },
    /// `on_tool_call`.
    ToolCall(Call),
    /// `on_tool_result`.
    ToolResult(Call, Outcome),
    /// A call `poll_event` announced.
    Started(Started),
}

impl Entry {
    /// The route and bytes of a frame entry.
    pub fn frame(&self) -> Option<(Route, &[u8])> {
        match self {
            Entry::Frame { route, bytes, .. } => Some((*route, bytes)),
            _ => None,
        }
    }

    /// The call of a hook entry.
    pub fn hook(&self) -> Option<&Call> {
        match self {
            Entry::ToolCall(c) | Entry::ToolResult(c, _) => Some(c),
            _ => None,
        }
    }

    /// The call of a started-call entry.
    pub fn started(&self) -> Option<&Started> {
        match self {
            Entry::Started(s) => Some(s),
            _ => None,
        }
    }
}

/// Hooks that keep every event, each with its `seq`.
#[derive(Clone, Debug, Default)]
pub struct Recorder {
    events: VecDeque<Entry>,
}

impl Hooks for Recorder {
    fn on_tool_call(&mut self, call: &CallInfo<'_>) {
        self.events.push_back(Entry::ToolCall(call.into()));
    }
    fn on_tool_result(&mut self, call: &CallInfo<'_>, outcome: CallOutcome<'_>) {
        self.events
            .push_back(Entry::ToolResult(call.into(), outcome.into()));
    }
}

/// The recorder is the library's [`Log`] (an unbounded one, in `std` memory): the host gets
/// hook events and frames in SPEC order from `Wrapper::poll_output`, as every host does.
impl Log for Recorder {
    fn oldest(&self) -> Option<Logged<'_>> {
        fn info(c: &Call) -> CallInfo<'_> {
            CallInfo {
                index: c.index,
                name: c.name.as_deref(),
                id: c.id.as_deref(),
                args: &c.args,
                seq: c.seq,
            }
        }
        let event = match self.events.front()? {
            Entry::ToolCall(c) => HookEvent::ToolCall(info(c)),
            Entry::ToolResult(c, Outcome::Result(r)) => {
                HookEvent::ToolResult(info(c), CallOutcome::Result(r))
            }
            Entry::ToolResult(c, Outcome::Error(e)) => {
                HookEvent::ToolResult(info(c), CallOutcome::Error(e))
            }
            _ => return None,
        };
        Some(Logged { event, cut: false })
    }

    fn drop_oldest(&mut self) {
        self.events.pop_front();
    }
}

/// Hooks the host can take the events of ([`Entry::ToolCall`] and [`Entry::ToolResult`],
/// oldest first), and that keep them for `poll_output`.
pub trait Recording: Log {
    /// The events recorded and not yet handed out.
    fn take_hooks(&mut self) -> Vec<Entry>;
}

impl Recording for Recorder {
    fn take_hooks(&mut self) -> Vec<Entry> {
        std::mem::take(&mut self.events).into()
    }
}

impl Recording for NoHooks {
    fn take_hooks(&mut self) -> Vec<Entry> {
        Vec::new()
    }
}

impl<R: Recording + ?Sized> Recording for &mut R {
    fn take_hooks(&mut self) -> Vec<Entry> {
        (**self).take_hooks()
    }
}

// =====================================================================
// The host
// =====================================================================

/// What a scripted tool does when one of its calls starts ([`Host::script`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Script {
    /// `complete` the deferred call with this raw JSON result, or fail it with this message.
    Complete(Result<Vec<u8>, String>),
    /// `complete` the deferred call with its own args.
    Echo,
    /// Feed the adapter call these frames, in order, then close it when `close` is set.
    Adapter {
        /// Frames from the adapter.
        frames: Vec<Vec<u8>>,
        /// Close the adapter after them.
        close: bool,
    },
}

/// Bytes of the buffer [`Host::new`] takes frames into.
pub const DEFAULT_BUFFER: usize = 64 * 1024;

/// The host of one wrapper: its clock, its output buffer, the frames taken, the scripts.
#[derive(Clone, Debug)]
pub struct Host {
    now: u64,
    buf: Vec<u8>,
    /// Frames taken since the wrapper was built.
    popped: u64,
    scripts: Vec<(String, Script)>,
    script_all: Option<Script>,
    /// Bytes of the buffer each frame is offered first (see [`Host::offer_short_buffer_first`]).
    short: Option<usize>,
    /// Frames the short buffer was too small for.
    short_refusals: u64,
}

impl Default for Host {
    fn default() -> Self {
        Self::new()
    }
}

impl Host {
    /// A host at 0 ms, taking frames into a [`DEFAULT_BUFFER`]-byte buffer.
    pub fn new() -> Self {
        Self::with_buffer(DEFAULT_BUFFER)
    }

    /// A host at 0 ms whose buffer is `len` bytes: a larger frame fails the test.
    pub fn with_buffer(len: usize) -> Self {
        Host {
            now: 0,
            buf: vec![0; len],
            popped: 0,
            scripts: Vec::new(),
            script_all: None,
            short: None,
            short_refusals: 0,
        }
    }

    /// The size of the output buffer.
    pub fn buffer_len(&self) -> usize {
        self.buf.len()
    }

    // ----- the clock ------------------------------------------------------

    /// The host's clock.
    pub fn now(&self) -> Instant {
        Instant::from_millis(self.now)
    }

    /// Sets the clock to `ms`; returns it.
    pub fn set_now(&mut self, ms: u64) -> Instant {
        self.now = ms;
        self.now()
    }

    /// Moves the clock `ms` on; returns it.
    pub fn advance(&mut self, ms: u64) -> Instant {
        self.set_now(self.now + ms)
    }

    /// Moves the clock to the wrapper's `poll_timeout()` (when that is later) and gives it
    /// `handle_timeout` there; returns that instant, or `None` when nothing is due ever.
    /// Drain first: a refusal (a full queue) fails the test.
    pub fn advance_to_next_timeout<H: Hooks>(&mut self, w: &mut Wrapper<'_, H>) -> Option<Instant> {
        let due = w.poll_timeout()?;
        self.now = self.now.max(due.as_millis());
        if let Err(e) = w.handle_timeout(self.now()) {
            panic!("handle_timeout at {}ms refused: {e:?}", self.now);
        }
        Some(self.now())
    }

    // ----- scripts --------------------------------------------------------

    /// From now on, [`drive`](Self::drive) runs `script` on every call of the tool `tool`
    /// that starts, at the host's clock (which must not be behind the wrapper's).
    pub fn script(&mut self, tool: &str, script: Script) -> &mut Self {
        self.scripts.push((tool.to_string(), script));
        self
    }

    /// From now on, `script` runs on every call that starts whose tool has no script of its own.
    pub fn script_all(&mut self, script: Script) -> &mut Self {
        self.script_all = Some(script);
        self
    }

    // ----- the lean forms: nothing allocated ----------------------------------

    /// Takes the next queued frame into the buffer; panics when it does not fit.
    #[inline]
    pub fn pop_frame<H: Hooks>(&mut self, w: &mut Wrapper<'_, H>) -> Option<(Route, &[u8])> {
        let len = self.buf.len();
        match self.try_pop_frame(w) {
            Ok(t) => t,
            Err(e) => too_small(e, len),
        }
    }

    /// From now on every frame is first offered the first `len` bytes of the buffer; a
    /// refusal must name the frame's exact size and leave the queue as it was, and the frame
    /// is then taken into the whole buffer (SPEC §4: a short buffer loses nothing).
    pub fn offer_short_buffer_first(&mut self, len: usize) -> &mut Self {
        self.short = Some(len.min(self.buf.len()));
        self
    }

    /// How many frames the buffer of [`offer_short_buffer_first`](Self::offer_short_buffer_first)
    /// was too small for.
    pub fn short_refusals(&self) -> u64 {
        self.short_refusals
    }

    /// A frame refused by the short buffer: the refusal must name a larger size and leave
    /// the queue as it was. Returns the size named.
    fn refused_short<H: Hooks>(
        &mut self,
        w: &Wrapper<'_, H>,
        e: BufferTooSmall,
        short: usize,
        queued: usize,
    ) -> usize {
        assert!(e.needed > short, "{e:?} from a {short}-byte buffer");
        assert_eq!(w.queued(), queued, "a refused poll changed the queue");
        self.short_refusals += 1;
        e.needed
    }

    /// Takes the next queued frame into the buffer, or says how large it is.
    #[inline]
    pub fn try_pop_frame<H: Hooks>(
        &mut self,
        w: &mut Wrapper<'_, H>,
    ) -> Result<Option<(Route, &[u8])>, BufferTooSmall> {
        let mut refused = None;
        if let Some(short) = self.short {
            let queued = w.queued();
            match w.poll_transmit(&mut self.buf[..short]) {
                Err(e) => refused = Some(self.refused_short(w, e, short, queued)),
                Ok(None) => return Ok(None),
                Ok(Some(t)) => {
                    self.took(w, None, t.len);
                    return Ok(Some((t.route, &self.buf[..t.len])));
                }
            }
        }
        let Some(t) = w.poll_transmit(&mut self.buf)? else {
            assert_eq!(
                refused, None,
                "a frame refused for its size, then none queued"
            );
            return Ok(None);
        };
        self.took(w, refused, t.len);
        Ok(Some((t.route, &self.buf[..t.len])))
    }

    /// Counts a frame of `len` bytes taken: within the configuration's bound, and of the
    /// size a refusal just before it named.
    fn took<H: Hooks>(&mut self, w: &Wrapper<'_, H>, refused: Option<usize>, len: usize) {
        if let Some(needed) = refused {
            assert_eq!(
                len, needed,
                "the refusal named another size than the frame's"
            );
        }
        within_bound(w, len);
        self.popped += 1;
    }

    /// Takes every queued frame, handing each to `f`; returns how many. Hook events and
    /// started calls stay for [`drive`](Self::drive).
    #[inline]
    pub fn pop_frames<H: Hooks>(
        &mut self,
        w: &mut Wrapper<'_, H>,
        mut f: impl FnMut(Route, &[u8]),
    ) -> usize {
        let mut n = 0;
        while let Some((route, bytes)) = self.pop_frame(w) {
            f(route, bytes);
            n += 1;
        }
        n
    }

    /// Takes every started call without looking at it; returns how many.
    pub fn skip_events<H: Hooks>(&mut self, w: &mut Wrapper<'_, H>) -> usize {
        let mut n = 0;
        while w.poll_event().is_some() {
            n += 1;
        }
        n
    }

    // ----- the log --------------------------------------------------------

    /// Every queued frame as (route, UTF-8 text); hook events and started calls stay for
    /// [`drive`](Self::drive).
    pub fn frames<H: Hooks>(&mut self, w: &mut Wrapper<'_, H>) -> Vec<(Route, String)> {
        let mut out = Vec::new();
        self.pop_frames(w, |route, bytes| {
            let text = String::from_utf8(bytes.to_vec())
                .unwrap_or_else(|e| panic!("a frame that is not UTF-8: {:?}", e.as_bytes()));
            out.push((route, text));
        });
        out
    }

    /// Every started call (`poll_event`), oldest first; frames stay queued.
    pub fn started<H: Hooks>(&mut self, w: &mut Wrapper<'_, H>) -> Vec<Started> {
        std::iter::from_fn(|| w.poll_event().map(Started::from)).collect()
    }

    /// Runs the wrapper until it is quiet: takes every frame and hook event in the order they
    /// happened, then every started call, running its script when it has one (and what that
    /// script makes the wrapper write), until nothing is left. Panics when a frame does not fit
    /// the buffer or the wrapper refuses a scripted input.
    pub fn drive<H: Recording>(&mut self, w: &mut Wrapper<'_, H>) -> Vec<Entry> {
        let len = self.buf.len();
        self.try_drive(w).unwrap_or_else(|e| too_small(e, len))
    }

    /// [`drive`](Self::drive), saying when a frame does not fit the buffer.
    pub fn try_drive<H: Recording>(
        &mut self,
        w: &mut Wrapper<'_, H>,
    ) -> Result<Vec<Entry>, BufferTooSmall> {
        let mut log = Vec::new();
        loop {
            self.take_frames(w, &mut log)?;
            let started = self.started(w);
            if started.is_empty() {
                return Ok(log);
            }
            for s in started {
                let script = self
                    .scripts
                    .iter()
                    .find(|(tool, _)| *tool == s.name)
                    .map(|(_, script)| script)
                    .or(self.script_all.as_ref())
                    .cloned();
                let (handle, args) = (s.handle, s.args.clone());
                log.push(Entry::Started(s));
                if let Some(script) = script {
                    self.run_script(w, handle, &args, script, &mut log)?;
                }
            }
        }
    }

    /// Frames and hook events, in the order they happened: as the library orders them
    /// (`Wrapper::poll_output`).
    fn take_frames<H: Recording>(
        &mut self,
        w: &mut Wrapper<'_, H>,
        log: &mut Vec<Entry>,
    ) -> Result<(), BufferTooSmall> {
        while let Some(entry) = self.try_pop_output(w)? {
            log.push(entry);
        }
        Ok(())
    }

    /// The next frame or hook event from `poll_output` (a frame offered the short buffer
    /// first, when the host has one: its refusal must name its size and change nothing).
    fn try_pop_output<H: Recording>(
        &mut self,
        w: &mut Wrapper<'_, H>,
    ) -> Result<Option<Entry>, BufferTooSmall> {
        let mut refused = None;
        if let Some(short) = self.short {
            let queued = w.queued();
            match w.poll_output(&mut self.buf[..short]) {
                Err(e) => refused = Some(self.refused_short(w, e, short, queued)),
                Ok(None) => return Ok(None),
                Ok(Some(Output::Hook(l))) => return Ok(Some(hook_entry(l))),
                Ok(Some(Output::Frame(t))) => {
                    self.took(w, None, t.len);
                    let bytes = self.buf[..t.len].to_vec();
                    return Ok(Some(self.frame_entry(t.route, bytes)));
                }
            }
        }
        match w.poll_output(&mut self.buf)? {
            None => {
                assert_eq!(
                    refused, None,
                    "a frame refused for its size, then none queued"
                );
                Ok(None)
            }
            Some(Output::Hook(l)) => {
                assert_eq!(refused, None, "a frame refused for its size, then a hook");
                Ok(Some(hook_entry(l)))
            }
            Some(Output::Frame(t)) => {
                self.took(w, refused, t.len);
                let bytes = self.buf[..t.len].to_vec();
                Ok(Some(self.frame_entry(t.route, bytes)))
            }
        }
    }

    fn frame_entry(&self, route: Route, bytes: Vec<u8>) -> Entry {
        Entry::Frame {
            n: self.popped,
            route,
            bytes,
        }
    }

    fn run_script<H: Recording>(
        &mut self,
        w: &mut Wrapper<'_, H>,
        h: CallHandle,
        args: &[u8],
        script: Script,
        log: &mut Vec<Entry>,
    ) -> Result<(), BufferTooSmall> {
        let (t, call) = (self.now(), h.index());
        let refused = |what: &str, e| panic!("scripted {what} for call {call} refused: {e:?}");
        match script {
            Script::Echo => {
                if let Err(e) = w.complete(t, h, Ok(args)) {
                    refused("completion", e)
                }
            }
            Script::Complete(outcome) => {
                let outcome = outcome.as_deref().map_err(String::as_str);
                if let Err(e) = w.complete(t, h, outcome) {
                    refused("completion", e)
                }
            }
            Script::Adapter { frames, close } => {
                for frame in &frames {
                    if let Err(e) = w.handle_adapter_frame(t, h, frame) {
                        refused("adapter frame", e)
                    }
                    self.take_frames(w, log)?;
                }
                if close {
                    if let Err(e) = w.handle_adapter_closed(t, h) {
                        refused("adapter close", e)
                    }
                }
            }
        }
        self.take_frames(w, log)
    }
}

#[cold]
fn too_small(e: BufferTooSmall, len: usize) -> ! {
    panic!(
        "a frame of {} bytes does not fit the host's {len}-byte buffer",
        e.needed
    )
}

// =====================================================================
// Named starting states
// =====================================================================

fn calc(_: &[u8], out: &mut ResultWriter<'_>) -> Result<(), ToolFailed> {
    out.write(br#"{"sum":3}"#);
    Ok(())
}
fn boom(_: &[u8], out: &mut ResultWriter<'_>) -> Result<(), ToolFailed> {
    out.write(b"boom");
    Err(ToolFailed)
}

/// The tools the named states call: `calc` (sync, `{"sum":3}`), `echo` (sync, its args),
/// `boom` (sync, fails with `boom`), `later` (deferred) and `files` (adapter).
pub const TOOLS: [Tool<'static>; 5] = [
    Tool::sync("calc", &calc),
    Tool::sync("echo", &echo),
    Tool::sync("boom", &boom),
    Tool::deferred("later"),
    Tool::adapter("files"),
];

/// The deferred call of the named states: `later`, id `d1`, args `{"n":1}`.
pub const LATER: &str =
    r#"{"type":"TOOL_CALL","content":{"id":"d1","name":"later","args":{"n":1}}}"#;
/// The adapter call of the named states: `files`, id `a1`, args `[1,2]`.
pub const FILES: &str = r#"{"type":"TOOL_CALL","content":{"id":"a1","name":"files","args":[1,2]}}"#;

/// Named state: a wrapper over [`TOOLS`] in `storage`, with a [`Recorder`]; nothing happened yet.
pub fn idle(storage: &mut Storage) -> Wrapper<'_, Recorder> {
    storage.wrapper(&TOOLS, Recorder::default())
}

/// Gives the wrapper a `TOOL_CALL` at `now` ms; returns its handle when it took a slot.
/// Panics unless the frame was intercepted.
pub fn start<H: Hooks>(w: &mut Wrapper<'_, H>, now: u64, frame: &str) -> Option<CallHandle> {
    match w.handle_response(Instant::from_millis(now), frame.as_bytes()) {
        Ok(Disposition::Intercepted { handle, .. }) => handle,
        other => panic!("not intercepted: {other:?}"),
    }
}

/// Named state: [`LATER`] started at 1 ms and [`FILES`] at 2 ms, both pending (calls 0 and 1);
/// returns their handles, `[deferred, adapter]`. Needs [`TOOLS`] and two free slots.
pub fn busy_without_end<H: Hooks>(w: &mut Wrapper<'_, H>) -> [CallHandle; 2] {
    let d = start(w, 1, LATER).expect("deferred handle");
    let f = start(w, 2, FILES).expect("adapter handle");
    [d, f]
}

/// Named state: [`busy_without_end`], then `boom` failed at once (call 2, at 3 ms: a trace
/// entry and a last tool error), the adapter's `TOOL_RESULT` `7` recorded (4 ms) and
/// `{"type":"END","content":1}` held (5 ms). Returns `[deferred, adapter]`.
pub fn busy<H: Hooks>(w: &mut Wrapper<'_, H>) -> [CallHandle; 2] {
    let [d, f] = busy_without_end(w);
    start(w, 3, r#"{"type":"TOOL_CALL","content":{"name":"boom"}}"#);
    w.handle_adapter_frame(
        Instant::from_millis(4),
        f,
        br#"{"type":"TOOL_RESULT","content":{"result":7}}"#,
    )
    .expect("recorded");
    assert_eq!(
        w.handle_response(Instant::from_millis(5), br#"{"type":"END","content":1}"#),
        Ok(Disposition::Held)
    );
    [d, f]
}

/// A frame from `poll_transmit` is within the bound hosts size their buffers by
/// (`WrapperConfig::max_frame_len`: never refused as too small, SPEC §4). Checked in test builds,
/// where every frame passes here; benches (release builds) drive the same host and do not
/// count the check.
fn within_bound<H: Hooks>(w: &Wrapper<'_, H>, len: usize) {
    if cfg!(debug_assertions) {
        let bound = w.config().max_frame_len();
        assert!(
            len <= bound,
            "a {len}-byte frame over max_frame_len {bound}"
        );
    }
}

/// A hook event from `poll_output`, owned.
fn hook_entry(l: Logged<'_>) -> Entry {
    match l.event {
        HookEvent::ToolCall(c) => Entry::ToolCall((&c).into()),
        HookEvent::ToolResult(c, o) => Entry::ToolResult((&c).into(), o.into()),
    }
}
