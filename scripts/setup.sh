#!/usr/bin/env bash
# Installs what cachecomm needs on a fresh Debian 12 machine (run as root, or with sudo available).
# Idempotent: does nothing when everything is already there. Called by `make demo` and `make test`.
set -euo pipefail

packages=(build-essential cmake pkg-config git
          openmpi-bin libopenmpi-dev mpich libmpich-dev
          hwloc libhwloc-dev libgtest-dev libgmock-dev libcli11-dev nlohmann-json3-dev
          python3 python3-pip)
python_packages=(matplotlib mpi4py)

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# Open MPI stays the default `mpirun`/`mpicc`; MPICH is used through its suffixed commands.
if [ "$(readlink -f /usr/bin/mpirun)" != "$(readlink -f /usr/bin/mpirun.openmpi)" ]; then
  "${sudo_cmd[@]}" update-alternatives --set mpi /usr/bin/mpicc.openmpi >/dev/null
  "${sudo_cmd[@]}" update-alternatives --set mpirun /usr/bin/mpirun.openmpi >/dev/null
fi

# Python packages for the report (and the preload tests) go to whichever python3 is first on PATH.
python=${PYTHON:-python3}
for module in "${python_packages[@]}"; do
  if ! "$python" -c "import $module" 2>/dev/null; then
    echo "setup: pip installing $module for $("$python" -c 'import sys; print(sys.executable)')"
    if [ "$module" = mpi4py ]; then
      # mpi4py builds against the default MPI (Open MPI) found through mpicc.
      MPICC=/usr/bin/mpicc.openmpi "$python" -m pip install -q --no-cache-dir mpi4py \
        || MPICC=/usr/bin/mpicc.openmpi "$python" -m pip install -q --no-cache-dir --break-system-packages mpi4py
    else
      "$python" -m pip install -q "$module" || "$python" -m pip install -q --break-system-packages "$module"
    fi
  fi
done
echo "setup: ok"
