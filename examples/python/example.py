import json

import polyweave_tool_adapter as pw


def get_weather(args: bytes) -> str:  # a sync tool: raw JSON arguments in, raw JSON result out
    return json.dumps({"city": json.loads(args)["city"], "temp_c": 21})


with pw.Wrapper({"get_weather": get_weather}) as w:
    for frame in ['{"type":"TOOL_CALL","content":{"id":"c1","name":"get_weather","args":{"city":"Oslo"}}}',
                  '{"type":"END"}']:  # the model's frames, as a provider decoder gives them
        if w.handle_response(0, frame).disposition == pw.Disposition.FORWARD:
            print("CONSUMER", frame)  # not for the wrapper: pass it on
        for t in w.transmits():  # what the wrapper sends, and where
            print(t.route.name, t.frame.decode())
