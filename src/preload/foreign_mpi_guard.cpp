// Runs when the preload library is loaded, before main: in a program of another MPI it restarts the
// program without itself. Forwarding calls would not do: its wrappers take this build's handle
// types, and an MPICH build (integer handles) would cut an Open MPI program's pointer handles in
// half. The check at MPI_Init (runtime.cpp) stays for programs that link the library instead of
// preloading it.
#include <dlfcn.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "preload/mpi_identity.hpp"

namespace {

// LD_PRELOAD without the entries naming this library; false when none named it.
bool preload_without(const std::string& self, std::string& rest) {
  const char* value = std::getenv("LD_PRELOAD");
  if (value == nullptr) return false;
  const std::string self_name = self.substr(self.rfind('/') + 1);
  const std::string self_stem = self_name.substr(0, self_name.find(".so") + 3);
  bool found = false;
  std::string entry;
  const auto flush = [&] {
    if (entry.empty()) return;
    const std::string name = entry.substr(entry.rfind('/') + 1);
    if (entry == self || name.rfind(self_stem, 0) == 0) {
      found = true;
    } else {
      rest += rest.empty() ? entry : ":" + entry;
    }
    entry.clear();
  };
  for (const char* c = value; *c != '\0'; ++c) {
    if (*c == ':' || *c == ' ') {
      flush();
    } else {
      entry += *c;
    }
  }
  flush();
  return found;
}

// glibc passes argc, argv and envp to the constructors of a preloaded library.
__attribute__((constructor)) void restart_without_preload_under_another_mpi(int /*argc*/,
                                                                            char** argv,
                                                                            char** /*envp*/) {
  Dl_info self{};
  if (dladdr(reinterpret_cast<void*>(&restart_without_preload_under_another_mpi), &self) == 0 ||
      self.dli_fname == nullptr || argv == nullptr)
    return;
  std::string rest;
  // Linked, not preloaded: the check at MPI_Init passes every call through.
  if (!preload_without(self.dli_fname, rest)) return;
  if (cachecomm::detail::preload::runs_on_built_mpi()) return;  // else it printed the line
  if (rest.empty()) {
    unsetenv("LD_PRELOAD");
  } else {
    setenv("LD_PRELOAD", rest.c_str(), 1);
  }
  execv("/proc/self/exe", argv);
  std::fprintf(stderr, "cachecomm preload: could not restart the program without it (%s)\n",
               std::strerror(errno));
}

}  // namespace
