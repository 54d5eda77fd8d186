// A C++17 host against an installed copy of the library, through the header-only wrapper
// polyweave_tool_adapter.hpp (installed beside the C header):
//
//     c++ -std=c++17 main.cpp $(pkg-config --cflags --libs polyweave-tool-adapter)
//
// The same round trip as main.c: one sync tool, `echo`, as a lambda; a model's TOOL_CALL
// in, the frames the wrapper owes out. No heap, no exceptions. tests/install_c.sh checks
// its output.
#include <polyweave_tool_adapter.hpp>

#include <array>
#include <cstdio>
#include <string_view>

namespace pw = polyweave;

namespace {

const char* route_name(pw::Route route)
{
    switch (route) {
    case pw::Route::model:
        return "model";
    case pw::Route::consumer:
        return "consumer";
    case pw::Route::adapter:
        return "adapter";
    }
    return "?";
}

} // namespace

int main()
{
    std::printf("PW_VERSION_STRING %s\n", PW_VERSION_STRING);
    std::printf("pw_version() %s\n", pw_version());

    // The wrapper owns its 16 KiB block and its tool (the lambda), in this stack frame.
    auto w = pw::make_wrapper<16384>(pw::default_config(), 1, pw::no_hooks(),
                                     pw::sync_tool("echo", [](std::string_view args, pw::Writer& out) {
                                         out.write(R"({"echo":)");
                                         out.write(args);
                                         out.write("}");
                                         return true;
                                     }));
    if (!w.status()) {
        std::array<char, 128> text{};
        std::string_view why = pw::result_text(w.status(), text);
        std::fprintf(stderr, "make_wrapper: %.*s (%zu bytes needed)\n", static_cast<int>(why.size()),
                     why.data(), w.required_bytes());
        return 1;
    }

    auto d = w.handle_response(0, R"({"type":"TOOL_CALL","content":{"id":"1","name":"echo","args":{"text":"hi"}}})");
    if (!d) {
        std::array<char, 128> text{};
        std::string_view why = pw::result_text(d.status(), text);
        std::fprintf(stderr, "handle_response: %.*s\n", static_cast<int>(why.size()), why.data());
        return 1;
    }
    std::printf("intercepted %d, call %u\n", d->disposition == pw::Disposition::intercepted ? 1 : 0,
                static_cast<unsigned>(d->index));

    std::array<char, 2048> buf{};
    while (auto t = w.poll_transmit(buf))
        std::printf("%s %.*s\n", route_name(t->route), static_cast<int>(t->frame.size()), t->frame.data());
    std::printf("pending %zu\n", w.pending());
    return 0;
}
