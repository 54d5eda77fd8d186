#include <polyweave_tool_adapter.hpp>

#include <array>
#include <cstdio>
#include <string_view>

int main() {
    namespace pw = polyweave;
    // The wrapper owns its 16 KiB block and its tools (lambdas): no heap, no exceptions.
    auto w = pw::make_wrapper<16384>(
        pw::default_config(), 2, pw::no_hooks(),
        pw::sync_tool("add", [](std::string_view, pw::Writer& out) { out.write("5"); return true; }),
        pw::deferred_tool("lookup"));
    if (!w.status()) return 1;
    auto d = w.handle_response(0, R"({"type":"TOOL_CALL","content":{"id":"c1","name":"add","args":{}}})");
    if (!d) return 1;
    std::array<char, 2048> buf{};
    while (auto t = w.poll_transmit(buf))
        std::printf("%s %.*s\n", t->route == pw::Route::model ? "model" : "consumer",
                    static_cast<int>(t->frame.size()), t->frame.data());
    return 0;
}
