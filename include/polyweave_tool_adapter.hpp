/*
 * polyweave-tool-adapter C++17 wrapper: header-only, over the C API of
 * polyweave_tool_adapter.h (link the same static library).
 *
 * - No heap, no std::function, no exceptions, no RTTI: builds with
 *   -fno-exceptions -fno-rtti. Errors are values: every fallible member
 *   returns a `Status` (a pw_result code) or a `Result<T>` (a code, plus a
 *   value on PW_OK); both are [[nodiscard]]. A tool or hook that throws would
 *   unwind into C: the trampolines are noexcept, so it ends in std::terminate.
 * - `Wrapper<BlockBytes, Hooks, Tools...>` owns its memory block (an aligned
 *   std::array<std::byte, BlockBytes> member), its hooks and its tools (the
 *   lambdas themselves, stored in the object; the C trampolines reach them
 *   through `userdata`). Its size is checked at run time against
 *   pw_wrapper_size: a block too small leaves the wrapper unusable with
 *   `status()` == PW_STORAGE_TOO_SMALL and `required_bytes()` saying how much.
 * - The C wrapper keeps pointers into the object (its block, the lambdas), so
 *   a Wrapper is neither copyable nor movable: make it where it will live
 *   (`auto w = make_wrapper<N>(...)` is fine: C++17 elides the copy).
 * - Text goes in and out as std::string_view spans, never copied. Tool names
 *   are borrowed: they must outlive the wrapper (string literals do). Spans
 *   the wrapper hands out (events, trace entries) point into its block and
 *   stay valid until the next call that changes the wrapper; hook spans only
 *   during the hook.
 * - Tools and hooks run inside the wrapper's calls and must not call the
 *   wrapper.
 */

#ifndef POLYWEAVE_TOOL_ADAPTER_HPP
#define POLYWEAVE_TOOL_ADAPTER_HPP

#include "polyweave_tool_adapter.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

namespace polyweave {

/* ----- errors ------------------------------------------------------------ */

/// A pw_result: PW_OK, or why a call did not succeed.
class [[nodiscard]] Status {
public:
    constexpr Status() noexcept = default;
    constexpr Status(pw_result code) noexcept : code_(code) {} // NOLINT: implicit on purpose
    constexpr bool ok() const noexcept { return code_ == PW_OK; }
    constexpr explicit operator bool() const noexcept { return ok(); }
    constexpr pw_result code() const noexcept { return code_; }
    friend constexpr bool operator==(Status a, Status b) noexcept { return a.code_ == b.code_; }
    friend constexpr bool operator!=(Status a, Status b) noexcept { return a.code_ != b.code_; }

private:
    pw_result code_ = PW_OK;
};

/// A value on PW_OK, or the code saying why there is none.
template <class T>
class [[nodiscard]] Result {
public:
    static constexpr Result success(T value) noexcept { return Result(PW_OK, std::move(value)); }
    /// `status` must not be PW_OK.
    static constexpr Result failure(Status status) noexcept { return Result(status.code(), T{}); }

    constexpr bool ok() const noexcept { return code_ == PW_OK; }
    constexpr explicit operator bool() const noexcept { return ok(); }
    constexpr pw_result code() const noexcept { return code_; }
    constexpr Status status() const noexcept { return code_; }
    /// The value (a default one unless ok()).
    constexpr const T& value() const noexcept { return value_; }
    constexpr const T& operator*() const noexcept { return value_; }
    constexpr const T* operator->() const noexcept { return &value_; }
    constexpr T value_or(T fallback) const noexcept { return ok() ? value_ : fallback; }

private:
    constexpr Result(pw_result code, T value) noexcept : code_(code), value_(std::move(value)) {}
    pw_result code_;
    T value_;
};

/// The message for a code (pw_result_text), written into `buf`; "?" when it does not fit.
template <std::size_t N>
std::string_view result_text(Status status, std::array<char, N>& buf) noexcept
{
    std::size_t len = 0;
    if (N == 0 || pw_result_text(static_cast<std::uint32_t>(status.code()),
                                 reinterpret_cast<std::uint8_t*>(buf.data()), N, &len) != PW_OK) {
        return "?";
    }
    return std::string_view(buf.data(), len);
}

/* ----- spans ------------------------------------------------------------- */

/// A span the library handed out, as a string_view (empty when its length is 0).
inline std::string_view view(pw_str s) noexcept
{
    return s.len == 0 ? std::string_view() : std::string_view(reinterpret_cast<const char*>(s.ptr), s.len);
}

/// A string_view as a span for the library (never a NULL pointer, even when empty).
inline pw_str str(std::string_view s) noexcept
{
    pw_str out;
    out.ptr = reinterpret_cast<const std::uint8_t*>(s.data() != nullptr ? s.data() : "");
    out.len = s.size();
    return out;
}

/* ----- values ------------------------------------------------------------ */

/// The wrapper's defaults (pw_wrapper_config_default).
inline pw_wrapper_config default_config() noexcept
{
    pw_wrapper_config cfg{};
    (void)pw_wrapper_config_default(&cfg);
    return cfg;
}

/// The memory block a wrapper with `slots` pending calls and `n_tools` tools needs.
inline Result<std::size_t> wrapper_size(const pw_wrapper_config& cfg, std::size_t slots, std::size_t n_tools) noexcept
{
    std::size_t n = 0;
    Status s = pw_wrapper_size(&cfg, slots, n_tools, &n);
    return s ? Result<std::size_t>::success(n) : Result<std::size_t>::failure(s);
}

/// Names a pending deferred or adapter call of one wrapper.
class CallHandle {
public:
    constexpr CallHandle() noexcept = default;
    constexpr explicit CallHandle(const pw_call_handle& raw) noexcept : raw_(raw) {}
    constexpr const pw_call_handle& raw() const noexcept { return raw_; }
    constexpr std::uint32_t index() const noexcept { return raw_.index; }
    constexpr std::uint16_t slot() const noexcept { return raw_.slot; }
    friend constexpr bool operator==(const CallHandle& a, const CallHandle& b) noexcept
    {
        return a.raw_.index == b.raw_.index && a.raw_.slot == b.raw_.slot && a.raw_.owner == b.raw_.owner;
    }
    friend constexpr bool operator!=(const CallHandle& a, const CallHandle& b) noexcept { return !(a == b); }

private:
    pw_call_handle raw_{};
};

/// How a call ended (or should end): a raw JSON result, or an error message.
struct Outcome {
    bool is_error = false;
    std::string_view text;

    static constexpr Outcome result(std::string_view json) noexcept { return Outcome{false, json}; }
    static constexpr Outcome error(std::string_view message) noexcept { return Outcome{true, message}; }
};

/// A call as the hooks see it.
struct CallInfo {
    std::uint32_t index = 0;                ///< every intercepted TOOL_CALL counts, from 0
    std::uint64_t seq = 0;                  ///< frames queued when the hook fired
    std::optional<std::string_view> name;   ///< none for a malformed call
    std::optional<std::string_view> id;
    std::string_view args;                  ///< raw JSON
};

/// What the host does with a model frame (the C pw_disposition_kind).
enum class Disposition : std::uint32_t {
    forward = PW_DISPOSITION_FORWARD,         ///< forward the very bytes passed in
    intercepted = PW_DISPOSITION_INTERCEPTED, ///< a TOOL_CALL, taken
    held = PW_DISPOSITION_HELD,               ///< an END, released later through poll_transmit
};

/// How the wrapper handled a model frame: its disposition, and for a call its index and handle.
struct Handled {
    Disposition disposition = Disposition::forward;
    std::uint32_t index = 0;           ///< the call's index (intercepted)
    std::optional<CallHandle> handle;  ///< a pending (deferred or adapter) call
};

/// How the wrapper took a completion.
enum class Completed : std::uint32_t {
    as_given = PW_COMPLETED_AS_GIVEN,
    result_too_large = PW_COMPLETED_RESULT_TOO_LARGE, ///< failed: `Tool <name> result exceeds <N> bytes`
    result_too_deep = PW_COMPLETED_RESULT_TOO_DEEP,   ///< failed: nested deeper than max_depth
    message_cut = PW_COMPLETED_MESSAGE_CUT,           ///< failed with the message cut to message_cap
};

enum class Route : std::uint32_t {
    model = PW_ROUTE_MODEL,
    consumer = PW_ROUTE_CONSUMER,
    adapter = PW_ROUTE_ADAPTER, ///< `Transmit::handle` names the call whose adapter gets it
};

/// A frame to write, and where (`frame` points into the caller's buffer).
struct Transmit {
    Route route = Route::model;
    CallHandle handle;
    std::string_view frame;
};

enum class EventKind : std::uint32_t {
    deferred = PW_PENDING_DEFERRED, ///< run it, then complete() it
    adapter = PW_PENDING_ADAPTER,   ///< connect its adapter (its TOOL_CALL is queued)
};

/// A call the host must start.
struct Event {
    CallHandle handle;
    EventKind kind = EventKind::deferred;
    std::size_t tool = 0; ///< index of its tool, in registration order
    std::string_view name;
    std::optional<std::string_view> id;
    std::string_view args; ///< raw JSON, without white space between tokens
};

struct TraceEntry {
    std::optional<std::string_view> name;
    std::string_view args;
    Outcome outcome;
    bool truncated = false; ///< a part was cut to fit the trace
};

/* ----- tools and hooks ---------------------------------------------------- */

/// Where a sync tool writes its JSON result (or, when it returns false, its error message).
class Writer {
public:
    explicit Writer(pw_writer* out) noexcept : out_(out) {}
    /// Appends; what does not fit fails the call as too large (a result) or is cut (a message).
    void write(std::string_view bytes) noexcept { (void)pw_writer_write(out_, str(bytes).ptr, bytes.size()); }

private:
    pw_writer* out_;
};

/// A sync tool: `fn(std::string_view args, Writer& out) -> bool`, true when `out` holds a result.
template <class F>
struct SyncTool {
    std::string_view name;
    F fn;
    std::uint32_t timeout_ms = PW_TOOL_DEFAULT_TIMEOUT;
};

struct DeferredTool {
    std::string_view name;
    std::uint32_t timeout_ms = PW_TOOL_DEFAULT_TIMEOUT;
};

struct AdapterTool {
    std::string_view name;
    std::uint32_t timeout_ms = PW_TOOL_DEFAULT_TIMEOUT;
};

template <class F>
SyncTool<std::decay_t<F>> sync_tool(std::string_view name, F&& fn)
{
    static_assert(std::is_invocable_r_v<bool, std::decay_t<F>&, std::string_view, Writer&>,
                  "a sync tool is called as fn(std::string_view args, Writer& out) -> bool");
    return SyncTool<std::decay_t<F>>{name, std::forward<F>(fn), PW_TOOL_DEFAULT_TIMEOUT};
}

/// A deferred tool; `timeout_ms` defaults to the wrapper's tool_timeout_ms.
inline DeferredTool deferred_tool(std::string_view name, std::uint32_t timeout_ms = PW_TOOL_DEFAULT_TIMEOUT) noexcept
{
    return DeferredTool{name, timeout_ms};
}

/// An adapter tool; `timeout_ms` defaults to the wrapper's tool_timeout_ms.
inline AdapterTool adapter_tool(std::string_view name, std::uint32_t timeout_ms = PW_TOOL_DEFAULT_TIMEOUT) noexcept
{
    return AdapterTool{name, timeout_ms};
}

/// Hooks: `on_call(const CallInfo&)`, `on_result(const CallInfo&, const Outcome&)`; either
/// may be nullptr (no hook).
template <class OnCall, class OnResult>
struct Hooks {
    OnCall on_call;
    OnResult on_result;
};

template <class OnCall, class OnResult>
Hooks<std::decay_t<OnCall>, std::decay_t<OnResult>> hooks(OnCall&& on_call, OnResult&& on_result)
{
    return {std::forward<OnCall>(on_call), std::forward<OnResult>(on_result)};
}

using NoHooks = Hooks<std::nullptr_t, std::nullptr_t>;

inline NoHooks no_hooks() noexcept { return NoHooks{nullptr, nullptr}; }

namespace detail {

inline std::optional<std::string_view> maybe(bool present, pw_str s) noexcept
{
    return present ? std::optional<std::string_view>(view(s)) : std::nullopt;
}

inline Outcome outcome_of(const pw_outcome& o) noexcept { return Outcome{o.is_error != 0, view(o.text)}; }

inline CallInfo call_info_of(const pw_call_info& c) noexcept
{
    CallInfo info;
    info.index = c.index;
    info.seq = c.seq;
    info.name = maybe(c.has_name != 0, c.name);
    info.id = maybe(c.has_id != 0, c.id);
    info.args = view(c.args);
    return info;
}

} // namespace detail

/* ----- the wrapper ---------------------------------------------------------- */

/// A wrapper in a `BlockBytes` block it owns, with its hooks and tools. Make it with
/// make_wrapper(); check status() before use (every call returns it while it is not PW_OK).
template <std::size_t BlockBytes, class HooksT, class... Tools>
class Wrapper {
public:
    static constexpr std::size_t block_bytes = BlockBytes;
    static constexpr std::size_t tool_count = sizeof...(Tools);

    Wrapper(const pw_wrapper_config& cfg, std::size_t slots, HooksT hooks, Tools... tools)
        : hooks_(std::move(hooks)), tools_(std::move(tools)...)
    {
        status_ = init(cfg, slots);
    }

    Wrapper(const Wrapper&) = delete;
    Wrapper& operator=(const Wrapper&) = delete;
    Wrapper(Wrapper&&) = delete;
    Wrapper& operator=(Wrapper&&) = delete;
    ~Wrapper() = default; // nothing to free

    /// PW_OK, or why the wrapper could not be made (then every call returns it).
    Status status() const noexcept { return status_; }
    /// What pw_wrapper_size asked for (0 when the configuration was refused).
    std::size_t required_bytes() const noexcept { return required_; }
    /// The C wrapper (NULL unless status() is PW_OK).
    pw_wrapper* native() noexcept { return w_; }

    /// A frame from the model.
    Result<Handled> handle_response(std::uint64_t now_ms, std::string_view frame) noexcept
    {
        pw_disposition d{};
        Status s = ready() ? pw_wrapper_handle_response(w_, now_ms, str(frame).ptr, frame.size(), &d) : status_;
        if (!s) {
            return Result<Handled>::failure(s);
        }
        Handled out;
        out.disposition = static_cast<Disposition>(d.kind);
        out.index = d.index;
        if (d.has_handle != 0) {
            out.handle = CallHandle(d.handle);
        }
        return Result<Handled>::success(out);
    }

    /// A frame from the consumer: PW_OK means forward it.
    Status handle_request(std::uint64_t now_ms, std::string_view frame) noexcept
    {
        return ready() ? pw_wrapper_handle_request(w_, now_ms, str(frame).ptr, frame.size()) : status_;
    }

    /// Completes a deferred call.
    Result<Completed> complete(std::uint64_t now_ms, CallHandle call, Outcome outcome) noexcept
    {
        pw_outcome o{};
        o.is_error = outcome.is_error ? 1 : 0;
        o.text = str(outcome.text);
        pw_completed how = PW_COMPLETED_AS_GIVEN;
        Status s = ready() ? pw_wrapper_complete(w_, now_ms, call.raw(), &o, &how) : status_;
        return s ? Result<Completed>::success(static_cast<Completed>(how)) : Result<Completed>::failure(s);
    }

    /// A frame from a pending adapter call's tool adapter.
    Status adapter_frame(std::uint64_t now_ms, CallHandle call, std::string_view frame) noexcept
    {
        return ready() ? pw_wrapper_handle_adapter_frame(w_, now_ms, call.raw(), str(frame).ptr, frame.size())
                       : status_;
    }

    /// The adapter of a pending call closed its source.
    Status adapter_closed(std::uint64_t now_ms, CallHandle call) noexcept
    {
        return ready() ? pw_wrapper_handle_adapter_closed(w_, now_ms, call.raw()) : status_;
    }

    /// The clock: calls at or past their deadline time out.
    Status timeout(std::uint64_t now_ms) noexcept
    {
        return ready() ? pw_wrapper_handle_timeout(w_, now_ms) : status_;
    }

    /// Cancels every pending call; the value is how many are left (drain, call again).
    Result<std::size_t> cancel(std::uint64_t now_ms, std::string_view reason) noexcept
    {
        std::size_t left = 0;
        Status s = ready() ? pw_wrapper_cancel(w_, now_ms, str(reason).ptr, reason.size(), &left) : status_;
        return s ? Result<std::size_t>::success(left) : Result<std::size_t>::failure(s);
    }

    /// No more continue prompts.
    Status abort() noexcept { return ready() ? pw_wrapper_abort(w_) : status_; }

    Status clear_trace() noexcept { return ready() ? pw_wrapper_clear_trace(w_) : status_; }

    /// The oldest queued frame, written into `buf`. nullopt when nothing is queued, or when
    /// `cap` is too small (the frame stays queued; `*needed`, if given, is set to its length,
    /// and to 0 in every other case), or when the wrapper is not usable.
    std::optional<Transmit> poll_transmit(char* buf, std::size_t cap, std::size_t* needed = nullptr) noexcept
    {
        if (needed != nullptr) {
            *needed = 0;
        }
        if (!ready()) {
            return std::nullopt;
        }
        pw_transmit t{};
        Status s = pw_wrapper_poll_transmit(w_, reinterpret_cast<std::uint8_t*>(buf), cap, &t);
        if (s.code() == PW_BUFFER_TOO_SMALL && needed != nullptr) {
            *needed = t.len;
        }
        if (!s) {
            return std::nullopt;
        }
        return Transmit{static_cast<Route>(t.route), CallHandle(t.handle), std::string_view(buf, t.len)};
    }

    template <std::size_t N>
    std::optional<Transmit> poll_transmit(std::array<char, N>& buf, std::size_t* needed = nullptr) noexcept
    {
        return poll_transmit(buf.data(), N, needed);
    }

    /// The next call to start, oldest first.
    std::optional<Event> poll_event() noexcept
    {
        pw_event e{};
        if (!ready() || pw_wrapper_poll_event(w_, &e) != PW_OK) {
            return std::nullopt;
        }
        Event out;
        out.handle = CallHandle(e.handle);
        out.kind = static_cast<EventKind>(e.kind);
        out.tool = e.tool;
        out.name = view(e.name);
        out.id = detail::maybe(e.has_id != 0, e.id);
        out.args = view(e.args);
        return out;
    }

    /// The earliest deadline (ms) of a pending call: call timeout() then.
    std::optional<std::uint64_t> poll_timeout() const noexcept
    {
        std::uint64_t t = pw_wrapper_poll_timeout(w_);
        return t == PW_NO_TIMEOUT ? std::nullopt : std::optional<std::uint64_t>(t);
    }

    /// Calls intercepted and not completed yet.
    std::size_t pending() const noexcept { return pw_wrapper_pending(w_); }

    /// Trace entry `index` (0 = oldest).
    std::optional<TraceEntry> trace_entry(std::size_t index) noexcept
    {
        pw_trace_entry e{};
        if (!ready() || pw_wrapper_trace_entry(w_, index, &e) != PW_OK) {
            return std::nullopt;
        }
        TraceEntry out;
        out.name = detail::maybe(e.has_name != 0, e.name);
        out.args = view(e.args);
        out.outcome = detail::outcome_of(e.outcome);
        out.truncated = e.truncated != 0;
        return out;
    }

    struct TraceEnd {};

    /// Walks the trace, oldest first (`for (const TraceEntry& e : w.trace())`).
    class TraceIterator {
    public:
        const TraceEntry& operator*() const noexcept { return *entry_; }
        const TraceEntry* operator->() const noexcept { return &*entry_; }
        TraceIterator& operator++() noexcept
        {
            entry_ = w_->trace_entry(++index_);
            return *this;
        }
        friend bool operator==(const TraceIterator& it, TraceEnd) noexcept { return !it.entry_; }
        friend bool operator!=(const TraceIterator& it, TraceEnd) noexcept { return bool(it.entry_); }

    private:
        friend class Wrapper;
        explicit TraceIterator(Wrapper* w) noexcept : w_(w), entry_(w->trace_entry(0)) {}
        Wrapper* w_;
        std::size_t index_ = 0;
        std::optional<TraceEntry> entry_;
    };

    class TraceRange {
    public:
        TraceIterator begin() const noexcept { return TraceIterator(w_); }
        TraceEnd end() const noexcept { return TraceEnd{}; }

    private:
        friend class Wrapper;
        explicit TraceRange(Wrapper* w) noexcept : w_(w) {}
        Wrapper* w_;
    };

    TraceRange trace() noexcept { return TraceRange(this); }

private:
    static constexpr std::size_t table_len = sizeof...(Tools) == 0 ? 1 : sizeof...(Tools);

    bool ready() const noexcept { return w_ != nullptr; }

    Status init(const pw_wrapper_config& cfg, std::size_t slots) noexcept
    {
        std::size_t need = 0;
        Status s = pw_wrapper_size(&cfg, slots, tool_count, &need);
        if (!s) {
            return s;
        }
        required_ = need;
        if (need > BlockBytes) {
            return PW_STORAGE_TOO_SMALL;
        }
        std::array<pw_tool, table_len> table{};
        fill_tools(table, std::index_sequence_for<Tools...>{});
        pw_hooks h{};
        h.userdata = &hooks_;
        if constexpr (!std::is_same_v<decltype(hooks_.on_call), std::nullptr_t>) {
            h.on_tool_call = &on_call_trampoline;
        }
        if constexpr (!std::is_same_v<decltype(hooks_.on_result), std::nullptr_t>) {
            h.on_tool_result = &on_result_trampoline;
        }
        pw_wrapper* w = nullptr;
        s = pw_wrapper_init(block_.data(), block_.size(), &cfg, slots, table.data(), tool_count, &h, &w);
        if (s) {
            w_ = w;
        }
        return s;
    }

    template <std::size_t... I>
    void fill_tools([[maybe_unused]] std::array<pw_tool, table_len>& table, std::index_sequence<I...>) noexcept
    {
        (fill(table[I], std::get<I>(tools_)), ...);
    }

    template <class F>
    static void fill(pw_tool& t, SyncTool<F>& tool) noexcept
    {
        t.name = str(tool.name);
        t.kind = PW_TOOL_KIND_SYNC;
        t.timeout_ms = tool.timeout_ms;
        t.call = &sync_trampoline<F>;
        t.userdata = &tool.fn;
    }

    static void fill(pw_tool& t, const DeferredTool& tool) noexcept
    {
        t.name = str(tool.name);
        t.kind = PW_TOOL_KIND_DEFERRED;
        t.timeout_ms = tool.timeout_ms;
    }

    static void fill(pw_tool& t, const AdapterTool& tool) noexcept
    {
        t.name = str(tool.name);
        t.kind = PW_TOOL_KIND_ADAPTER;
        t.timeout_ms = tool.timeout_ms;
    }

    template <class F>
    static pw_tool_status sync_trampoline(void* userdata, pw_str args, pw_writer* out) noexcept
    {
        Writer writer(out);
        return (*static_cast<F*>(userdata))(view(args), writer) ? PW_TOOL_STATUS_OK : PW_TOOL_STATUS_FAILED;
    }

    static void on_call_trampoline(void* userdata, const pw_call_info* call) noexcept
    {
        static_cast<HooksT*>(userdata)->on_call(detail::call_info_of(*call));
    }

    static void on_result_trampoline(void* userdata, const pw_call_info* call, const pw_outcome* outcome) noexcept
    {
        static_cast<HooksT*>(userdata)->on_result(detail::call_info_of(*call), detail::outcome_of(*outcome));
    }

    alignas(std::max_align_t) std::array<std::byte, BlockBytes> block_;
    pw_wrapper* w_ = nullptr;
    Status status_ = PW_NULL_POINTER;
    std::size_t required_ = 0;
    HooksT hooks_;
    std::tuple<Tools...> tools_;
};

/// Makes a wrapper in place: `auto w = make_wrapper<4096>(cfg, slots, hooks(...), tools...);`
/// then check `w.status()`.
template <std::size_t BlockBytes, class HooksT, class... Tools>
Wrapper<BlockBytes, HooksT, Tools...> make_wrapper(const pw_wrapper_config& cfg, std::size_t slots, HooksT hooks,
                                                   Tools... tools)
{
    return Wrapper<BlockBytes, HooksT, Tools...>(cfg, slots, std::move(hooks), std::move(tools)...);
}

} // namespace polyweave

#endif /* POLYWEAVE_TOOL_ADAPTER_HPP */
