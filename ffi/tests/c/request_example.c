/* The README's request: a conversation in static memory (the user's text, the model's
 * response as a decoder gave it, the wrapper's result) and the next body, its length first,
 * then its bytes in 64-byte pieces. */
#include <stdio.h>
#include <string.h>
#include "polyweave_tool_adapter.h"

static uint64_t conv_mem[PW_CONVERSATION_SIZE_BOUND(4096) / sizeof(uint64_t) + 1];
static uint64_t req_mem[PW_REQUEST_SIZE_BOUND(1) / sizeof(uint64_t) + 1];

static pw_str str(const char *s) {
    pw_str out;
    out.ptr = (const uint8_t *)s;
    out.len = strlen(s);
    return out;
}

int main(void) {
    const char *frames[] = {
        "{\"type\":\"TOOL_CALL\",\"content\":{\"id\":\"c1\",\"name\":\"add\",\"args\":{\"a\":2,\"b\":3}}}",
        "{\"type\":\"END\",\"content\":{\"reason\":\"tool_calls\"}}",
        "{\"type\":\"TOOL_RESULT\",\"content\":{\"id\":\"c1\",\"name\":\"add\",\"result\":5}}",
    };
    pw_declaration add;
    pw_request_options opts;
    pw_conversation *c;
    pw_request *r;
    pw_pushed pushed;
    uint8_t buf[64];
    size_t i, n, len, bad;
    pw_result rc;

    if (pw_conversation_init(conv_mem, sizeof conv_mem, &c) != PW_OK) return 1;
    if (pw_conversation_push_user(c, (const uint8_t *)"Add 2 and 3", 11) != PW_OK) return 1;
    if (pw_conversation_begin_response(c, PW_PROVIDER_OPENAI_CHAT) != PW_OK) return 1;
    for (i = 0; i < 3; i++) /* a refused frame changes nothing: see pw_result_text */
        if (pw_conversation_push_frame(c, (const uint8_t *)frames[i], strlen(frames[i]), &pushed))
            return 1;

    memset(&add, 0, sizeof add); /* empty spans: no MCP entry, no description */
    add.name = str("add");
    add.schema = str("{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"number\"}}}");
    pw_request_options_default(&opts);
    opts.model = str("gpt-5");
    rc = pw_request_init(req_mem, sizeof req_mem, c, PW_PROVIDER_OPENAI_CHAT, &opts, &add, 1, &r,
                         &bad);
    if (rc != PW_OK) return 1; /* PW_DECLARATION_*: declaration number `bad` */
    if (pw_request_len(r, &len) != PW_OK) return 1;
    printf("Content-Length: %lu\n\n", (unsigned long)len);
    while ((rc = pw_request_write(r, buf, sizeof buf, &n)) == PW_OK)
        fwrite(buf, 1, n, stdout); /* or one chunk of a chunked transfer */
    printf("\n");
    return rc == PW_NOTHING ? 0 : 1;
}
