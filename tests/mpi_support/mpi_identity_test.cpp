// The preload's MPI check: the strings MPI_Get_library_version returns, and what counts as the MPI
// a build is for.
#include "preload/mpi_identity.hpp"

#include <gtest/gtest.h>

using cachecomm::detail::preload::compatible;
using cachecomm::detail::preload::mpi_identity;
using cachecomm::detail::preload::parse_library_version;

TEST(MpiIdentity, ParsesOpenMpi) {
  const auto id = parse_library_version(
      "Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo rev: v4.1.4, May 26, 2022");
  EXPECT_EQ(id.implementation, "Open MPI");
  EXPECT_EQ(id.version, "4.1.4");
  EXPECT_EQ(id.name(), "Open MPI 4.1.4");
}

TEST(MpiIdentity, ParsesMpich) {
  const auto id = parse_library_version(
      "MPICH Version:      5.0.2\nMPICH Release date: Tue Jun 24 2025\nMPICH ABI:   17:2:5\n");
  EXPECT_EQ(id.implementation, "MPICH");
  EXPECT_EQ(id.version, "5.0.2");
  EXPECT_EQ(parse_library_version("MPICH Version:\t4.0.2\nMPICH Release date: ...").version,
            "4.0.2");
}

TEST(MpiIdentity, ParsesIntelMpi) {
  const auto id =
      parse_library_version("Intel(R) MPI Library 2021.19 for Linux* OS\n\nsome more text");
  EXPECT_EQ(id.implementation, "Intel MPI");
  EXPECT_EQ(id.version, "2021.19");
}

TEST(MpiIdentity, UnknownKeepsTheFirstLine) {
  EXPECT_EQ(parse_library_version("Some MPI 3\nmore").implementation, "Some MPI 3");
  EXPECT_EQ(parse_library_version("").implementation, "an unknown MPI");
}

TEST(MpiIdentity, SameImplementationAndMajorVersionAreCompatible) {
  const mpi_identity openmpi4{"Open MPI", "4.1.4", ""};
  EXPECT_TRUE(compatible(openmpi4, {"Open MPI", "4.1.6", ""}));
  EXPECT_FALSE(compatible(openmpi4, {"Open MPI", "5.0.11", ""}));
  EXPECT_FALSE(compatible(openmpi4, {"MPICH", "4.0.2", ""}));
  const mpi_identity mpich4{"MPICH", "4.0.2", ""};
  EXPECT_FALSE(compatible(mpich4, {"MPICH", "5.0.2", ""}));
  EXPECT_FALSE(compatible(mpich4, {"Intel MPI", "2021.19", ""}));
  EXPECT_TRUE(compatible({"Intel MPI", "2021.18.1", ""}, {"Intel MPI", "2021.19", ""}));
}

TEST(MpiIdentity, AbiBuildsServeWhateverLibmpiAbiServesTheProgram) {
  const mpi_identity abi{"MPI ABI", "1", ""};
  EXPECT_TRUE(compatible(abi, {"MPICH", "5.0.2", "/opt/mpich/lib/libmpi_abi.so.1"}));
  EXPECT_TRUE(compatible(abi, {"Intel MPI", "2021.18.1", "/opt/impi/lib/libmpi_abi.so.1"}));
  EXPECT_FALSE(compatible(abi, {"MPICH", "5.0.2", "/opt/mpich/lib/libmpi.so.12"}));
  EXPECT_FALSE(compatible(abi, {"Open MPI", "4.1.4", "/usr/lib/libmpi.so.40"}));
}
