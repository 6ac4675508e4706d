#pragma once
// The one include of Boost.Process v2 (slow to compile: keep it to the files that spawn).
// Boost 1.81's headers with BOOST_PROCESS_USE_STD_FS (we do not link Boost.Filesystem) still name
// boost::optional and Boost type traits without including them; include those first.

#include <type_traits>

#include <boost/optional.hpp>
#include <boost/type_traits.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/readable_pipe.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/process/v2/environment.hpp>
#include <boost/process/v2/process.hpp>
#include <boost/process/v2/stdio.hpp>
