use polyweave_tool_adapter::{
    Instant, NoHooks, ResultWriter, Slot, Tool, ToolFailed, Wrapper, WrapperConfig,
};

fn main() {
    // A sync tool writes its JSON result; a deferred one is completed by the host later.
    let add = |_args: &[u8], out: &mut ResultWriter<'_>| -> Result<(), ToolFailed> {
        out.write(b"5");
        Ok(())
    };
    let tools = [Tool::sync("add", &add), Tool::deferred("lookup")];

    // Every byte of state is the host's: slots for pending calls and one arena.
    const CFG: WrapperConfig = WrapperConfig::DEFAULT;
    let mut slots = [Slot::EMPTY; 2];
    let mut arena = [0u8; CFG.arena_len(2)];
    let mut w = Wrapper::new(CFG, &tools, NoHooks, &mut slots, &mut arena).unwrap();

    let call = br#"{"type":"TOOL_CALL","content":{"id":"c1","name":"add","args":{}}}"#;
    w.handle_response(Instant::from_millis(0), call).unwrap();
    let mut buf = [0u8; 512];
    while let Some(t) = w.poll_transmit(&mut buf).unwrap() {
        // Model {"type":"TOOL_RESULT",...,"result":5}}, then the prompt to Model and Consumer
        let frame = core::str::from_utf8(&buf[..t.len]).unwrap();
        println!("{:?} {frame}", t.route);
    }
}
