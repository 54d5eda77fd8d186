// A C++17 host of the polyweave tool adapter through the header-only RAII wrapper
// (include/polyweave_tool_adapter.hpp): one round trip with a sync, a deferred and an
// adapter tool, on a simulated clock. It prints every frame it would write and exits 0 only
// when the frames, hook calls, events and trace are exactly the expected ones.
//
// Built by its Makefile (and by ffi/tests/cpp_host.rs) with -Wall -Wextra -Werror -pedantic
// -fno-exceptions -fno-rtti: no heap, no exceptions.

#include "polyweave_tool_adapter.hpp"

#include <array>
#include <cstdio>
#include <cstring>
#include <string_view>

namespace {

using namespace std::string_view_literals;

int failures = 0;

void check(bool ok, const char* what, int line)
{
    if (!ok) {
        ++failures;
        std::fprintf(stderr, "main.cpp:%d: check failed: %s\n", line, what);
    }
}

#define CHECK(cond) check((cond), #cond, __LINE__)

// A fixed-size log of text lines (hook calls), no heap.
class Log {
public:
    void add(std::string_view a, std::string_view b = {}, std::string_view c = {})
    {
        if (count_ == lines_.size()) {
            return;
        }
        auto& line = lines_[count_];
        std::size_t n = 0;
        for (std::string_view part : {a, b, c}) {
            std::size_t take = part.size() < line.size() - n ? part.size() : line.size() - n;
            if (take > 0) {
                std::memcpy(line.data() + n, part.data(), take);
                n += take;
            }
        }
        lens_[count_++] = n;
    }
    std::size_t size() const { return count_; }
    std::string_view operator[](std::size_t i) const { return std::string_view(lines_[i].data(), lens_[i]); }

private:
    std::array<std::array<char, 128>, 16> lines_{};
    std::array<std::size_t, 16> lens_{};
    std::size_t count_ = 0;
};

const char* route_name(polyweave::Route r)
{
    switch (r) {
    case polyweave::Route::model:
        return "model";
    case polyweave::Route::consumer:
        return "consumer";
    case polyweave::Route::adapter:
        return "adapter";
    }
    return "?";
}

// Every frame the wrapper hands out, in order, against the expected ones.
struct Expected {
    polyweave::Route route;
    std::string_view frame;
};

constexpr Expected kExpected[] = {
    // The sync call: its result, then the continue prompt to the model and the consumer.
    {polyweave::Route::model,
     R"({"type":"TOOL_RESULT","content":{"id":"1","name":"echo","result":{"echo":[1,2]}}})"},
    {polyweave::Route::model, R"({"type":"TEXT","content":"Tool results above."})"},
    {polyweave::Route::consumer, R"({"type":"TEXT","content":"Tool results above."})"},
    // The adapter call goes to its adapter.
    {polyweave::Route::adapter,
     R"({"type":"TOOL_CALL","content":{"id":"3","name":"files","args":{"dir":"/tmp"}}})"},
    // Both complete; the held END is released after the prompt.
    {polyweave::Route::model,
     R"({"type":"TOOL_RESULT","content":{"id":"2","name":"lookup","result":{"value":42}}})"},
    {polyweave::Route::model,
     R"({"type":"TOOL_RESULT","content":{"id":"3","name":"files","result":["a.txt","b.txt"]}})"},
    {polyweave::Route::model, R"({"type":"TEXT","content":"Tool results above."})"},
    {polyweave::Route::consumer, R"({"type":"TEXT","content":"Tool results above."})"},
    {polyweave::Route::consumer, R"({"type":"END"})"},
};

constexpr std::size_t kExpectedCount = sizeof kExpected / sizeof kExpected[0];

} // namespace

int main()
{
    namespace pw = polyweave;

    std::array<char, 512> buf{};
    std::size_t frames_seen = 0;
    int echo_calls = 0;
    Log hooks_log;

    pw_wrapper_config cfg = pw::default_config();
    auto w = pw::make_wrapper<16384>(
        cfg, 2,
        pw::hooks([&hooks_log](const pw::CallInfo& c) { hooks_log.add("call ", c.name.value_or("?")); },
                  [&hooks_log](const pw::CallInfo& c, const pw::Outcome& o) {
                      hooks_log.add(c.name.value_or("?"), o.is_error ? " error " : " ok ", o.text);
                  }),
        pw::sync_tool("echo",
                      [&echo_calls](std::string_view args, pw::Writer& out) {
                          ++echo_calls;
                          out.write(R"({"echo":)");
                          out.write(args);
                          out.write("}");
                          return true;
                      }),
        pw::deferred_tool("lookup"), pw::adapter_tool("files", 5000));
    if (!w.status()) {
        std::array<char, 96> text{};
        std::fprintf(stderr, "wrapper: %.*s (%zu bytes needed, %zu given)\n",
                     static_cast<int>(pw::result_text(w.status(), text).size()),
                     pw::result_text(w.status(), text).data(), w.required_bytes(), w.block_bytes);
        return 1;
    }
    std::printf("wrapper: %zu of %zu bytes, %zu tools\n", w.required_bytes(), w.block_bytes, w.tool_count);

    // Writes out every queued frame, checking each against the next expected one.
    auto drain = [&]() {
        while (auto t = w.poll_transmit(buf)) {
            std::printf("-> %-8s %.*s\n", route_name(t->route), static_cast<int>(t->frame.size()),
                        t->frame.data());
            bool ok = frames_seen < kExpectedCount && kExpected[frames_seen].route == t->route &&
                      kExpected[frames_seen].frame == t->frame;
            CHECK(ok);
            ++frames_seen;
        }
    };

    // 1. A sync call runs at once.
    auto d = w.handle_response(0, R"({"type":"TOOL_CALL","content":{"id":"1","name":"echo","args":[1, 2]}})");
    CHECK(d.ok() && d->disposition == pw::Disposition::intercepted && d->index == 0 && !d->handle);
    CHECK(echo_calls == 1);
    drain();

    // 2. Frames the wrapper does not act on are forwarded by the host, both ways.
    d = w.handle_response(1, R"({"type":"TEXT","content":"Let me look."})");
    CHECK(d.ok() && d->disposition == pw::Disposition::forward);
    CHECK(w.handle_request(1, R"({"type":"TEXT","content":"thanks"})").ok());

    // 3. A deferred call, an END (held while calls are pending), an adapter call.
    d = w.handle_response(10, R"({"type":"TOOL_CALL","content":{"id":"2","name":"lookup","args":{"key": "answer"}}})");
    CHECK(d.ok() && d->handle.has_value());
    const pw::CallHandle lookup = d.value().handle.value_or(pw::CallHandle());
    d = w.handle_response(11, R"({"type":"END"})");
    CHECK(d.ok() && d->disposition == pw::Disposition::held);
    d = w.handle_response(12, R"({"type":"TOOL_CALL","content":{"id":"3","name":"files","args":{"dir":"/tmp"}}})");
    CHECK(d.ok() && d->handle.has_value());
    const pw::CallHandle files = d.value().handle.value_or(pw::CallHandle());
    CHECK(w.pending() == 2);
    CHECK(w.poll_timeout() == std::optional<std::uint64_t>(5012)); // files' own 5 s

    auto e = w.poll_event();
    CHECK(e && e->kind == pw::EventKind::deferred && e->handle == lookup && e->tool == 1);
    CHECK(e && e->name == "lookup" && e->id == "2"sv && e->args == R"({"key":"answer"})");
    e = w.poll_event();
    CHECK(e && e->kind == pw::EventKind::adapter && e->handle == files && e->tool == 2);
    CHECK(!w.poll_event());

    // A buffer too small keeps the frame and says how much it needs.
    std::array<char, 16> small{};
    std::size_t needed = 0;
    CHECK(!w.poll_transmit(small, &needed));
    CHECK(needed == kExpected[frames_seen].frame.size());
    drain();

    // 4. The host completes the deferred call; the adapter answers and closes.
    auto c = w.complete(20, lookup, pw::Outcome::result(R"({"value": 42})"));
    CHECK(c.ok() && *c == pw::Completed::as_given);
    CHECK(w.adapter_frame(30, files, R"({"type":"TEXT","content":"working"})").ok());
    CHECK(w.adapter_frame(30, files, R"({"type":"TOOL_RESULT","content":{"result":["a.txt","b.txt"]}})").ok());
    CHECK(w.adapter_closed(31, files).ok());
    drain();
    CHECK(w.pending() == 0 && !w.poll_timeout());

    // 5. Late completions and bad input are refused with their codes; nothing changes.
    CHECK(w.complete(32, lookup, pw::Outcome::result("1")).code() == PW_CALL_COMPLETED);
    CHECK(w.adapter_closed(32, lookup).code() == PW_CALL_COMPLETED);
    CHECK(w.handle_response(30, R"({"type":"END"})").code() == PW_CLOCK_WENT_BACKWARDS);
    CHECK(w.handle_response(32, "[1]").code() == PW_FRAME_NOT_OBJECT);
    CHECK(w.handle_request(32, "").code() == PW_FRAME_NOT_OBJECT);
    CHECK(w.cancel(32, "nothing pending").value_or(99) == 0);
    CHECK(!w.poll_transmit(buf));

    // 6. The trace and the hooks, oldest first.
    constexpr std::string_view kTrace[] = {
        "echo [1,2] -> {\"echo\":[1,2]}",
        "lookup {\"key\":\"answer\"} -> {\"value\":42}",
        "files {\"dir\":\"/tmp\"} -> [\"a.txt\",\"b.txt\"]",
    };
    std::size_t n = 0;
    for (const pw::TraceEntry& t : w.trace()) {
        std::printf("trace: %.*s %.*s -> %s%.*s\n", static_cast<int>(t.name.value_or("?").size()),
                    t.name.value_or("?").data(), static_cast<int>(t.args.size()), t.args.data(),
                    t.outcome.is_error ? "error " : "", static_cast<int>(t.outcome.text.size()),
                    t.outcome.text.data());
        if (n < 3) {
            std::string_view want = kTrace[n];
            std::size_t at = want.find(' ');
            std::size_t arrow = want.find(" -> ");
            CHECK(t.name == want.substr(0, at));
            CHECK(t.args == want.substr(at + 1, arrow - at - 1));
            CHECK(!t.outcome.is_error && t.outcome.text == want.substr(arrow + 4));
            CHECK(!t.truncated);
        }
        ++n;
    }
    CHECK(n == 3);
    CHECK(w.clear_trace().ok() && !w.trace_entry(0));

    constexpr std::string_view kHooks[] = {
        "call echo", "echo ok {\"echo\":[1, 2]}", "call lookup", "call files",
        "lookup ok {\"value\": 42}", "files ok [\"a.txt\",\"b.txt\"]",
    };
    CHECK(hooks_log.size() == 6);
    for (std::size_t i = 0; i < hooks_log.size(); ++i) {
        std::printf("hook: %.*s\n", static_cast<int>(hooks_log[i].size()), hooks_log[i].data());
        CHECK(i < 6 && hooks_log[i] == kHooks[i]);
    }

    // 7. After abort no continue prompt; a block too small is an error, not a crash.
    CHECK(w.abort().ok());
    CHECK(w.handle_response(40, R"({"type":"TOOL_CALL","content":{"name":"echo"}})").ok());
    auto t = w.poll_transmit(buf);
    CHECK(t && t->frame == R"({"type":"TOOL_RESULT","content":{"name":"echo","result":{"echo":{}}}})");
    CHECK(!w.poll_transmit(buf));

    auto tiny = pw::make_wrapper<64>(cfg, 1, pw::no_hooks());
    CHECK(tiny.status().code() == PW_STORAGE_TOO_SMALL);
    CHECK(tiny.required_bytes() > 64);
    CHECK(tiny.handle_request(0, R"({"type":"END"})").code() == PW_STORAGE_TOO_SMALL);
    CHECK(!tiny.poll_transmit(buf) && tiny.pending() == 0);

    CHECK(frames_seen == kExpectedCount);
    std::printf("cpp-host: %zu frames, %s\n", frames_seen, failures == 0 ? "all as expected" : "MISMATCH");
    return failures == 0 ? 0 : 1;
}
