// The one error boundary: everything else lives in the library.
#include <exception>
#include <iostream>

#include "cli/commands.hpp"
#include "util/errors.hpp"

int main(int argc, char** argv) {
    try {
        return sg::cli::dispatch(argc, argv);
    } catch (const sg::Failure& e) {
        std::cerr << "sparkguard: error: " << e.what() << "\n";
        return e.exit_code();
    } catch (const std::exception& e) {
        std::cerr << "sparkguard: error: internal: " << e.what() << "\n";
        return sg::kExitInternal;
    }
}
