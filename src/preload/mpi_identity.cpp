#include "preload/mpi_identity.hpp"

#include <dlfcn.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

#include "cachecomm/config.hpp"
#include "coll/mpi_library.hpp"

#ifndef CACHECOMM_MPI_LIBRARY
#define CACHECOMM_MPI_LIBRARY "unknown library"
#endif

namespace cachecomm::detail::preload {

namespace {

const setting_declaration fake_version_setting{
    "CACHECOMM_TEST_MPI_LIBRARY_VERSION", "",
    "Tests only: the preload's MPI check takes this string instead of MPI_Get_library_version "
    "(a mismatch then passes every call through)."};

// MPI_MAX_LIBRARY_VERSION_STRING of the MPI we were built for may be smaller than the one of the
// MPI we run on (Open MPI: 256, MPICH and Intel MPI: 8192): the buffer fits any of them.
constexpr std::size_t version_buffer_bytes = 1 << 16;

std::string trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\n");
  return std::string(text.substr(first, last - first + 1));
}

std::string major_of(const std::string& version) {
  return version.substr(0, version.find('.'));
}

// The launcher's rank of this process, read before MPI can be trusted (its handles may be another
// MPI's); a process no launcher started counts as rank 0.
bool launcher_rank_zero() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"}) {
    if (const char* value = std::getenv(name)) return std::strcmp(value, "0") == 0;
  }
  return true;
}

}  // namespace

std::string mpi_identity::name() const {
  return version.empty() ? implementation : implementation + " " + version;
}

mpi_identity built_mpi() {
  mpi_identity built;
#if defined(MPI_ABI_VERSION)
  // The MPI-5 standard ABI: any MPI whose libmpi_abi serves the program (MPICH 5, Intel MPI).
  built.implementation = "MPI ABI";
  built.version = std::to_string(MPI_ABI_VERSION);
#elif defined(I_MPI_VERSION)
  built.implementation = "Intel MPI";
  built.version = I_MPI_VERSION;
#elif defined(OMPI_MAJOR_VERSION)
  built.implementation = "Open MPI";
  built.version = std::to_string(OMPI_MAJOR_VERSION) + "." + std::to_string(OMPI_MINOR_VERSION) +
                  "." + std::to_string(OMPI_RELEASE_VERSION);
#elif defined(MPICH_VERSION)
  built.implementation = "MPICH";
  built.version = MPICH_VERSION;
#else
  built.implementation =
      "MPI " + std::to_string(MPI_VERSION) + "." + std::to_string(MPI_SUBVERSION);
#endif
  built.library = CACHECOMM_MPI_LIBRARY;
  return built;
}

mpi_identity parse_library_version(const std::string& text) {
  const std::string line = trim(std::string_view(text).substr(0, text.find('\n')));
  mpi_identity parsed;
  const auto word_after = [&line](std::size_t from) {
    const auto start = line.find_first_not_of(" \t:", from);
    if (start == std::string::npos) return std::string{};
    return line.substr(start, line.find_first_of(" \t,", start) - start);
  };
  const auto family = classify_mpi_library(line);
  if (family == mpi_library_family::unknown) {
    parsed.implementation = line.empty() ? "an unknown MPI" : line;
  } else {
    const std::string_view marker = version_marker(family);
    parsed.implementation = to_string(family);
    parsed.version = word_after(line.find(marker) + marker.size());
  }
  return parsed;
}

mpi_identity running_mpi() {
  std::string text;
  const char* fake = std::getenv("CACHECOMM_TEST_MPI_LIBRARY_VERSION");
  const std::string fake_text = fake != nullptr ? fake : "";
  if (!fake_text.empty()) {
    text = fake_text;
  } else {
    std::vector<char> buffer(version_buffer_bytes, '\0');
    int length = 0;
    if (PMPI_Get_library_version(buffer.data(), &length) == MPI_SUCCESS)
      text.assign(buffer.data(), strnlen(buffer.data(), buffer.size()));
  }
  mpi_identity running = parse_library_version(text);
  if (!fake_text.empty()) {
    running.library = "faked by CACHECOMM_TEST_MPI_LIBRARY_VERSION";
    return running;
  }
  Dl_info where{};
  // The library our PMPI calls bind to, whichever the dynamic loader chose.
  if (dladdr(reinterpret_cast<void*>(&PMPI_Init), &where) != 0 && where.dli_fname != nullptr)
    running.library = where.dli_fname;
  else
    running.library = "unknown library";
  return running;
}

bool compatible(const mpi_identity& built, const mpi_identity& running) {
  if (built.implementation == "MPI ABI") {
    // Handles are the ABI's whichever MPI implements it: what matters is the library the calls
    // reach.
    const std::string file = running.library.substr(running.library.rfind('/') + 1);
    return file.starts_with("libmpi_abi.so");
  }
  if (built.implementation.starts_with("MPI "))
    return true;  // an MPI we cannot tell apart: trust it
  return built.implementation == running.implementation &&
         major_of(built.version) == major_of(running.version);
}

bool runs_on_built_mpi() {
  const mpi_identity built = built_mpi();
  const mpi_identity running = running_mpi();
  if (compatible(built, running)) return true;
  if (launcher_rank_zero()) {
    std::fprintf(stderr,
                 "cachecomm preload: built for %s (%s) but this program runs on %s (%s): every MPI "
                 "call goes to MPI unchanged\n",
                 built.name().c_str(), built.library.c_str(), running.name().c_str(),
                 running.library.c_str());
  }
  return false;
}

}  // namespace cachecomm::detail::preload
