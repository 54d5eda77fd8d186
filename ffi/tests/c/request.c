/*
 * The conversation's and the request's C API from C, built and run by ffi/tests/c_api.rs
 * (cc -std=c99 -Wall -Wextra -Werror -pedantic): a conversation built from a decoder's
 * frames, a wrapper's result and user texts; its body for openai-chat and anthropic written
 * through a small buffer and compared with the exact bytes; every code checked, refusals
 * included. Static memory only, sized by the header's bounds.
 */
#include "polyweave_tool_adapter.h"

#include <stdio.h>
#include <string.h>

#include "check.h"

#define CAPACITY 2048
#define DECLS 2

static uint64_t conv_mem[PW_CONVERSATION_SIZE_BOUND(CAPACITY) / sizeof(uint64_t) + 1];
static uint64_t req_mem[PW_REQUEST_SIZE_BOUND(DECLS) / sizeof(uint64_t) + 1];
static uint8_t body[4096];

static const char *const FRAMES[] = {
    "{\"type\":\"TEXT\",\"content\":\"Let me \"}",
    "{\"type\":\"TEXT\",\"content\":\"add.\"}",
    "{\"type\":\"TOOL_CALL\",\"content\":{\"id\":\"call_1\",\"name\":\"add\",\"args\":{\"a\":2,\"b\":3}}}",
    "{\"type\":\"END\",\"content\":{\"reason\":\"tool_calls\"}}",
};
static const char RESULT[] = "{\"type\":\"TOOL_RESULT\",\"content\":{\"id\":\"call_1\",\"name\":\"add\",\"result\":5}}";
static const char SCHEMA[] = "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"number\"},\"b\":{\"type\":\"number\"}}}";
static const char MCP_ENTRY[] = "{\"name\":\"fs.read\",\"inputSchema\":{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"}}}}";

static const char WANT_CHAT[] =
    "{\"model\":\"m\",\"messages\":[{\"role\":\"system\",\"content\":\"Be terse.\"},"
    "{\"role\":\"user\",\"content\":\"Add 2 and 3\"},"
    "{\"role\":\"assistant\",\"content\":\"Let me add.\",\"tool_calls\":[{\"id\":\"call_1\",\"type\":\"function\","
    "\"function\":{\"name\":\"add\",\"arguments\":\"{\\\"a\\\":2,\\\"b\\\":3}\"}}]},"
    "{\"role\":\"tool\",\"tool_call_id\":\"call_1\",\"content\":\"5\"},"
    "{\"role\":\"user\",\"content\":\"Thanks\"}],"
    "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"add\",\"description\":\"Adds two numbers\","
    "\"parameters\":{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"number\"},\"b\":{\"type\":\"number\"}}}}},"
    "{\"type\":\"function\",\"function\":{\"name\":\"fs_read\",\"parameters\":{\"type\":\"object\","
    "\"properties\":{\"path\":{\"type\":\"string\"}}}}}],"
    "\"stream\":true,\"stream_options\":{\"include_usage\":true}}";

static const char WANT_ANTHROPIC[] =
    "{\"model\":\"m\",\"max_tokens\":4096,\"system\":\"Be terse.\",\"messages\":["
    "{\"role\":\"user\",\"content\":\"Add 2 and 3\"},"
    "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"Let me add.\"},"
    "{\"type\":\"tool_use\",\"id\":\"call_1\",\"name\":\"add\",\"input\":{\"a\":2,\"b\":3}}]},"
    "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"call_1\",\"content\":\"5\"},"
    "{\"type\":\"text\",\"text\":\"Thanks\"}]}],"
    "\"tools\":[{\"name\":\"add\",\"description\":\"Adds two numbers\",\"input_schema\":{\"type\":\"object\","
    "\"properties\":{\"a\":{\"type\":\"number\"},\"b\":{\"type\":\"number\"}}}},"
    "{\"name\":\"fs_read\",\"input_schema\":{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"}}}}],"
    "\"stream\":true}";

static pw_str str_of(const char *s)
{
    pw_str out;
    out.ptr = (const uint8_t *)s;
    out.len = strlen(s);
    return out;
}

static pw_result push(pw_conversation *c, const char *frame, pw_pushed *out)
{
    return pw_conversation_push_frame(c, (const uint8_t *)frame, strlen(frame), out);
}

/* Writes the whole body through buffers of `chunk` bytes into `body`; its length, or
 * (size_t)-1 on a code that is neither PW_OK nor PW_NOTHING. */
static size_t write_all(pw_request *r, size_t chunk)
{
    uint8_t buf[16];
    size_t at = 0, n = 0;
    pw_result rc;
    while ((rc = pw_request_write(r, buf, chunk, &n)) == PW_OK) {
        if (n == 0 || n > chunk || at + n > sizeof body) return (size_t)-1;
        memcpy(body + at, buf, n);
        at += n;
    }
    return rc == PW_NOTHING && n == 0 ? at : (size_t)-1;
}

static int body_is(size_t n, const char *want)
{
    if (n == strlen(want) && memcmp(body, want, n) == 0) return 1;
    fprintf(stderr, "body: %.*s\nwant: %s\n", (int)(n == (size_t)-1 ? 0 : n), (const char *)body, want);
    return 0;
}

int main(void)
{
    pw_conversation *c = NULL;
    pw_request *r = NULL;
    pw_conversation_stats st;
    pw_request_options opts;
    pw_declaration decls[DECLS];
    pw_pushed pushed = PW_PUSHED_IGNORED;
    size_t need = 0, len = 0, index = 12345, n = 0, i;
    uint8_t text[80];

    /* Sizes: the bounds hold, the memory is every byte after the object. */
    CHECK_RC(pw_conversation_size(CAPACITY, &need), PW_OK);
    CHECK(need <= PW_CONVERSATION_SIZE_BOUND(CAPACITY));
    CHECK_RC(pw_request_size(DECLS, &need), PW_OK);
    CHECK(need <= PW_REQUEST_SIZE_BOUND(DECLS));
    CHECK(pw_conversation_align() <= PW_MAX_ALIGN && pw_request_align() <= PW_MAX_ALIGN);
    CHECK_RC(pw_conversation_init(conv_mem, 8, &c), PW_STORAGE_TOO_SMALL);
    CHECK(c == NULL);
    CHECK_RC(pw_conversation_init(conv_mem, sizeof conv_mem, &c), PW_OK);
    CHECK(c != NULL);
    CHECK_RC(pw_conversation_get_stats(c, &st), PW_OK);
    CHECK(st.used == 0 && st.capacity >= CAPACITY && st.entries == 0 && st.evicted == 0);

    /* The conversation: system, user, the model's response as a decoder gave it, the
     * wrapper's result, the user again. */
    CHECK_RC(pw_conversation_set_system(c, LIT("Be terse.")), PW_OK);
    CHECK_RC(pw_conversation_push_user(c, LIT("Add 2 and 3")), PW_OK);
    CHECK_RC(push(c, FRAMES[0], &pushed), PW_CONVERSATION_NO_RESPONSE);
    CHECK_RC(pw_conversation_begin_response(c, PW_PROVIDER_OPENAI_CHAT), PW_OK);
    for (i = 0; i < 3; i++) {
        pushed = PW_PUSHED_ENDED;
        CHECK_RC(push(c, FRAMES[i], &pushed), PW_OK);
        CHECK(pushed == PW_PUSHED_KEPT);
    }
    CHECK_RC(push(c, FRAMES[3], &pushed), PW_OK);
    CHECK(pushed == PW_PUSHED_ENDED);
    CHECK_RC(push(c, "{\"type\":\"TOOL_RESULT\",\"content\":{\"id\":\"call_9\",\"name\":\"add\",\"result\":1}}",
                  &pushed),
             PW_CONVERSATION_UNKNOWN_CALL);
    CHECK_RC(push(c, RESULT, &pushed), PW_OK);
    CHECK(pushed == PW_PUSHED_KEPT);
    CHECK_RC(push(c, RESULT, &pushed), PW_CONVERSATION_ALREADY_ANSWERED);
    CHECK_RC(push(c, "{\"type\":", &pushed), PW_INVALID_JSON);
    CHECK(pw_result_is_malformed(PW_INVALID_JSON) == 1);
    CHECK_RC(pw_conversation_push_user(c, LIT("")), PW_CONVERSATION_EMPTY_TEXT);
    CHECK_RC(pw_conversation_push_user(c, LIT("\xff")), PW_TEXT_NOT_UTF8);
    CHECK_RC(pw_conversation_pin_first_user(c, 2), PW_BAD_ARGUMENT);
    CHECK_RC(pw_conversation_begin_response(c, 77), PW_UNKNOWN_PROVIDER);
    CHECK_RC(pw_conversation_push_user(c, LIT("Thanks")), PW_OK);
    CHECK_RC(pw_conversation_get_stats(c, &st), PW_OK);
    CHECK(st.entries == 4 && st.evicted == 0 && st.used > 0 && st.used < CAPACITY);

    /* The tools: the host's own, and an MCP server's (its name mapped for the provider). */
    memset(decls, 0, sizeof decls);
    decls[0].name = str_of("add");
    decls[0].description = str_of("Adds two numbers");
    decls[0].schema = str_of(SCHEMA);
    decls[1].mcp_entry = str_of(MCP_ENTRY);
    CHECK_RC(pw_request_options_default(&opts), PW_OK);
    CHECK(opts.model.len == 0 && opts.max_tokens == 0 && opts.tool_choice == PW_TOOL_CHOICE_UNSET);
    opts.model = str_of("m");

    CHECK_RC(pw_request_init(req_mem, sizeof req_mem, c, PW_PROVIDER_OPENAI_CHAT, &opts, decls, DECLS,
                             &r, &index),
             PW_OK);
    CHECK(index == 12345);
    CHECK_RC(pw_request_len(r, &len), PW_OK);
    CHECK(len == strlen(WANT_CHAT));
    CHECK_RC(pw_request_write(r, body, 0, &n), PW_BUFFER_TOO_SMALL);
    CHECK(n == 1);
    n = write_all(r, 5);
    CHECK(body_is(n, WANT_CHAT));

    CHECK_RC(pw_request_init(req_mem, sizeof req_mem, c, PW_PROVIDER_ANTHROPIC, &opts, decls, DECLS,
                             &r, &index),
             PW_OK);
    CHECK_RC(pw_request_len(r, &len), PW_OK);
    CHECK(len == strlen(WANT_ANTHROPIC));
    n = write_all(r, 16);
    CHECK(body_is(n, WANT_ANTHROPIC));

    /* Refusals naming a declaration: its index. */
    decls[0].name = str_of("add two");
    r = NULL;
    CHECK_RC(pw_request_init(req_mem, sizeof req_mem, c, PW_PROVIDER_ANTHROPIC, &opts, decls, DECLS,
                             &r, &index),
             PW_DECLARATION_BAD_NAME);
    CHECK(index == 0 && r == NULL);
    decls[0].name = str_of("add");
    decls[1] = decls[0];
    CHECK_RC(pw_request_init(req_mem, sizeof req_mem, c, PW_PROVIDER_ANTHROPIC, &opts, decls, DECLS,
                             &r, &index),
             PW_DECLARATION_DUPLICATE_NAME);
    CHECK(index == 1 && r == NULL);
    memset(&decls[1], 0, sizeof decls[1]);
    decls[1].mcp_entry = str_of(MCP_ENTRY);
    decls[0].strict = 1;
    CHECK_RC(pw_request_init(req_mem, sizeof req_mem, c, PW_PROVIDER_OPENAI_CHAT, &opts, decls, DECLS,
                             &r, &index),
             PW_DECLARATION_NOT_STRICT);
    CHECK(index == 0 && r == NULL);
    decls[0].strict = 0;
    index = 12345;
    opts.tool_choice = PW_TOOL_CHOICE_REQUIRED;
    CHECK_RC(pw_request_init(req_mem, sizeof req_mem, c, PW_PROVIDER_OLLAMA, &opts, decls, DECLS, &r,
                             &index),
             PW_REQUEST_TOOL_CHOICE_UNSUPPORTED);
    CHECK(index == 12345 && r == NULL);
    opts.tool_choice = PW_TOOL_CHOICE_UNSET;
    opts.extra = str_of("{\"stream\":false}");
    CHECK_RC(pw_request_init(req_mem, sizeof req_mem, c, PW_PROVIDER_OLLAMA, &opts, decls, DECLS, &r,
                             &index),
             PW_REQUEST_EXTRA_CLASH);
    opts.extra = str_of("");

    /* A conversation changed under a request: the request is stale. */
    CHECK_RC(pw_request_init(req_mem, sizeof req_mem, c, PW_PROVIDER_OPENAI_CHAT, &opts, decls, DECLS,
                             &r, &index),
             PW_OK);
    CHECK_RC(pw_request_write(r, body, 8, &n), PW_OK);
    CHECK(n == 8 && memcmp(body, "{\"model\"", 8) == 0);
    CHECK_RC(pw_conversation_get_stats(c, &st), PW_OK); /* a query: still fresh */
    CHECK_RC(pw_request_len(r, &len), PW_OK);
    CHECK_RC(pw_conversation_push_user(c, LIT("And 4?")), PW_OK);
    n = 77;
    CHECK_RC(pw_request_write(r, body, 8, &n), PW_REQUEST_STALE);
    CHECK(n == 77);
    CHECK_RC(pw_request_len(r, &len), PW_REQUEST_STALE);
    CHECK_RC(pw_result_text(PW_REQUEST_STALE, text, sizeof text, &n), PW_OK);
    CHECK(n == strlen("request: the conversation changed since it was made") &&
          memcmp(text, "request: the conversation changed since it was made", n) == 0);

    /* Gemini's path. */
    CHECK_RC(pw_request_gemini_path(LIT("gemini-2.5-flash"), text, sizeof text, &n), PW_OK);
    CHECK(n == 53 && memcmp(text, "models/gemini-2.5-flash:streamGenerateContent?alt=sse", n) == 0);
    CHECK_RC(pw_request_gemini_path(LIT("gemini-2.5-flash"), text, 10, &n), PW_BUFFER_TOO_SMALL);
    CHECK(n == 53);

    /* NULLs. */
    CHECK_RC(pw_conversation_push_user(NULL, LIT("x")), PW_NULL_POINTER);
    CHECK_RC(pw_request_write(NULL, body, 8, &n), PW_NULL_POINTER);
    CHECK_RC(pw_request_len(r, NULL), PW_NULL_POINTER);
    CHECK_RC(pw_conversation_clear(c), PW_OK);
    CHECK_RC(pw_conversation_get_stats(c, &st), PW_OK);
    CHECK(st.used == 0 && st.entries == 0);
    return check_report("request");
}
