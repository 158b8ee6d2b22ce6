#!/usr/bin/env bash
# Installs the build into a fresh prefix, moves the prefix elsewhere (installed programs must run
# from any prefix), then builds and runs the examples against it (find_package and pkg-config) and
# runs a plain MPI program through the installed cachecomm-run.
#
# check_install.sh --build DIR --source DIR --mpirun EXE [--flag F]... --program PLAIN_MPI_PROGRAM
#                  [--other-mpicc MPICC]   (a compiler of another MPI: cachecomm-run must refuse its programs)
set -euo pipefail
build=""; source=""; mpirun=""; flags=(); program=""; other_mpicc=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --source) source="$2"; shift 2 ;;
    --mpirun) mpirun="$2"; shift 2 ;;
    --flag) flags+=("$2"); shift 2 ;;
    --program) program="$2"; shift 2 ;;
    --other-mpicc) other_mpicc="$2"; shift 2 ;;
    *) echo "check_install.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[[ -n "$build" && -n "$source" && -n "$mpirun" && -n "$program" ]] || { echo "check_install.sh: missing arguments" >&2; exit 2; }
fail() { echo "FAIL: $*" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
version=$(sed -nE 's/.*version = "([0-9.]+)".*/\1/p' "$source/include/cachecomm/version.hpp")
minor=${version%.*}

cmake --install "$build" --prefix "$work/staged" >"$work/install.log" || { cat "$work/install.log"; fail "cmake --install failed"; }
mv "$work/staged" "$work/prefix"  # relocated: nothing may point at the first prefix
prefix=$work/prefix
unset LD_LIBRARY_PATH
for file in include/cachecomm/cachecomm.hpp include/cachecomm/version.hpp bin/cachecomm-info bin/cachecomm-bench \
            bin/cachecomm-laplace bin/cachecomm-report bin/cachecomm-run share/doc/cachecomm/README.md; do
  [[ -e "$prefix/$file" ]] || fail "$file is not installed"
done
libdir=$(dirname "$(find "$prefix" -name "libcachecomm.so.$version" | head -1)")
[[ -d "$libdir" ]] || fail "libcachecomm.so.$version is not installed"
soname=$(readelf -d "$libdir/libcachecomm.so.$version" | sed -nE 's/.*SONAME.*\[(.*)\].*/\1/p')
[[ "$soname" == "libcachecomm.so.$minor" ]] || fail "soname $soname, expected libcachecomm.so.$minor (version $version)"
[[ -e "$libdir/libcachecomm_mpi.so.$version" ]] || fail "libcachecomm_mpi is not installed"
grep -q "PACKAGE_VERSION \"$version\"" "$libdir/cmake/cachecomm/cachecomm-config-version.cmake" ||
  fail "the CMake package version is not $version"

"$prefix/bin/cachecomm-info" --version >"$work/info" || { cat "$work/info"; fail "installed cachecomm-info --version failed"; }
cat "$work/info"
grep -qx "cachecomm $version" "$work/info" || fail "cachecomm-info --version does not print cachecomm $version"
grep -q "^MPI: built for " "$work/info" || fail "cachecomm-info --version does not name the MPI"

echo "== find_package example"
cmake -S "$source/examples/find_package" -B "$work/find_package" -DCMAKE_PREFIX_PATH="$prefix" >"$work/fp.log" 2>&1 &&
  cmake --build "$work/find_package" >>"$work/fp.log" 2>&1 || { cat "$work/fp.log"; fail "the find_package example does not build"; }
"$mpirun" -n 2 "${flags[@]}" "$work/find_package/allreduce_example" | tee "$work/fp.out"
grep -q "allreduce over 2 ranks = 3 (ok)" "$work/fp.out" || fail "the find_package example gave a wrong result"

echo "== find_package version rules (0.x: only the same minor version matches)"
major=${version%%.*}; minor_only=${minor#*.}
mkdir -p "$work/versions"
printf 'cmake_minimum_required(VERSION 3.22)\nproject(v LANGUAGES C CXX)\nfind_package(cachecomm ${REQUEST} CONFIG QUIET)\nif(cachecomm_FOUND)\nmessage(STATUS "found=TRUE")\nelse()\nmessage(STATUS "found=FALSE")\nendif()\n' \
  >"$work/versions/CMakeLists.txt"
found_for() {  # prints TRUE or FALSE: does find_package(cachecomm $1) accept the installed version?
  rm -rf "$work/versions/build"
  cmake -S "$work/versions" -B "$work/versions/build" -DREQUEST="$1" -DCMAKE_PREFIX_PATH="$prefix" 2>&1 |
    sed -nE 's/.*found=(TRUE|FALSE)$/\1/p'
}
[[ "$(found_for "$minor")" == TRUE ]] || fail "find_package(cachecomm $minor) does not accept version $version"
for other in "$major.$((minor_only + 1))" "$((major + 1)).$minor_only"; do
  [[ "$(found_for "$other")" == FALSE ]] || fail "find_package(cachecomm $other) accepted version $version"
done
if [[ "$minor_only" -gt 0 ]]; then
  [[ "$(found_for "$major.$((minor_only - 1))")" == FALSE ]] || fail "find_package(cachecomm $major.$((minor_only - 1))) accepted version $version"
fi

echo "== pkg-config example"
cp -r "$source/examples/pkg-config" "$work/pc"
PKG_CONFIG_PATH="$libdir/pkgconfig" make -C "$work/pc" >"$work/pc.log" 2>&1 || { cat "$work/pc.log"; fail "the pkg-config example does not build"; }
[[ "$(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --modversion cachecomm)" == "$version" ]] || fail "cachecomm.pc version is not $version"
"$mpirun" -n 2 "${flags[@]}" "$work/pc/allreduce_example" | tee "$work/pc.out"
grep -q "allreduce over 2 ranks = 3 (ok)" "$work/pc.out" || fail "the pkg-config example gave a wrong result"

echo "== cachecomm-run"
CACHECOMM_MPIRUN="$mpirun" "$prefix/bin/cachecomm-run" --summary -n 2 "${flags[@]}" -- "$program" >"$work/run.out" 2>"$work/run.err" ||
  { cat "$work/run.out" "$work/run.err"; fail "cachecomm-run failed"; }
grep -q "cachecomm preload summary (2 ranks" "$work/run.err" || { cat "$work/run.err"; fail "cachecomm-run: no preload summary"; }
awk '$1 == "MPI_Barrier" && $2 == "served" && $3 > 0 {f = 1} END {exit !f}' "$work/run.err" || fail "cachecomm-run: MPI_Barrier not served"
# Without --: the first argument naming an executable is the program.
CACHECOMM_MPIRUN="$mpirun" "$prefix/bin/cachecomm-run" --dry-run -n 2 "$program" >"$work/dry" || fail "cachecomm-run --dry-run failed"
grep -qE -- "(-x LD_PRELOAD=|-genv LD_PRELOAD )$prefix/.*libcachecomm_mpi.so .*-n 2 $program" "$work/dry" || { cat "$work/dry"; fail "cachecomm-run built a wrong command"; }
for launcher in mpirun.openmpi mpirun.mpich; do
  command -v $launcher >/dev/null || continue
  expected="-x LD_PRELOAD="; [[ $launcher == mpirun.mpich ]] && expected="-genv LD_PRELOAD "
  CACHECOMM_MPIRUN=$launcher "$prefix/bin/cachecomm-run" --dry-run --no-check -n 2 -- "$program" | grep -qF -- "$expected" ||
    fail "cachecomm-run with $launcher does not pass $expected"
done
# A program that carries MPI in itself: the preload cannot reach its calls.
printf 'int MPI_Init(int* c, char*** v) { (void)c; (void)v; return 0; }\nint main(void) { return MPI_Init(0, 0); }\n' >"$work/static.c"
cc -o "$work/static_mpi" "$work/static.c"
if CACHECOMM_MPIRUN="$mpirun" "$prefix/bin/cachecomm-run" -n 1 -- "$work/static_mpi" 2>"$work/static.err"; then fail "cachecomm-run accepted a program statically linked to MPI"; fi
grep -q "statically linked to MPI" "$work/static.err" || { cat "$work/static.err"; fail "no clear error for a statically linked program"; }
# A program of another MPI.
if [[ -n "$other_mpicc" ]]; then
  "$other_mpicc" -o "$work/other_mpi" "$source/tests/preload/preload_collectives.c"
  if CACHECOMM_MPIRUN="$mpirun" "$prefix/bin/cachecomm-run" --dry-run -n 2 -- "$work/other_mpi" 2>"$work/other.err"; then
    fail "cachecomm-run accepted a program of another MPI"
  fi
  grep -q "uses the MPI library .* cachecomm was built with" "$work/other.err" || { cat "$work/other.err"; fail "no clear error for a program of another MPI"; }
  cat "$work/other.err"
fi
echo "PASS: installed, relocated, examples built and ran, cachecomm-run served MPI_Barrier"
