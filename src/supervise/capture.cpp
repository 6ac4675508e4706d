#include "supervise/capture.hpp"

#include <sys/wait.h>

#include "supervise/boost_process.hpp"

namespace sg {

namespace asio = boost::asio;
namespace bp = boost::process::v2;

namespace {

void drain(asio::readable_pipe& pipe, std::string& sink, size_t limit) {
    auto chunk = std::make_shared<std::array<char, 8192>>();
    pipe.async_read_some(asio::buffer(*chunk), [&pipe, &sink, limit, chunk](auto ec, size_t n) {
        if (ec) return;
        sink.append(chunk->data(), std::min(n, limit - std::min(limit, sink.size())));
        drain(pipe, sink, limit);
    });
}

}  // namespace

Result<CapturedOutput> capture_output(const std::vector<std::string>& argv, double timeout_seconds, size_t limit) {
    if (argv.empty()) return make_error("empty command");
    bp::filesystem::path exe = argv[0].find('/') == std::string::npos ? bp::environment::find_executable(argv[0])
                                                                      : bp::filesystem::path(argv[0]);
    if (exe.empty()) return make_error(argv[0] + ": command not found");

    asio::io_context ctx;
    asio::readable_pipe out_pipe(ctx), err_pipe(ctx);
    CapturedOutput result;
    boost::system::error_code ec;
    auto proc = bp::default_process_launcher()(ctx.get_executor(), ec, exe,
                                               std::vector<std::string>(argv.begin() + 1, argv.end()),
                                               bp::process_stdio{nullptr, out_pipe, err_pipe});
    if (ec) return make_error(argv[0] + ": " + ec.message());

    drain(out_pipe, result.out, limit);
    drain(err_pipe, result.err, limit);
    asio::steady_timer timer(ctx, std::chrono::milliseconds(static_cast<long>(timeout_seconds * 1000)));
    timer.async_wait([&](auto timer_ec) {
        if (timer_ec) return;
        result.timed_out = true;
        boost::system::error_code ignored;
        proc.terminate(ignored);
    });
    proc.async_wait([&](auto, int) {
        timer.cancel();
        const int status = proc.native_exit_code();  // the portable code hides whether it was a signal
        result.exit_code = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
    });
    ctx.run();
    return result;
}

}  // namespace sg
