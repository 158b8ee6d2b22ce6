// Umbrella header: everything a cachecomm user needs.
#pragma once

#include "cachecomm/barrier.hpp"
#include "cachecomm/channel.hpp"
#include "cachecomm/collectives.hpp"
#include "cachecomm/comm.hpp"
#include "cachecomm/comm_cache.hpp"
#include "cachecomm/config.hpp"
#include "cachecomm/datatype.hpp"
#include "cachecomm/error.hpp"
#include "cachecomm/grid.hpp"
#include "cachecomm/grid_transport.hpp"
#include "cachecomm/halo.hpp"
#include "cachecomm/nonblocking.hpp"
#include "cachecomm/version.hpp"
#include "cachecomm/wait_policy.hpp"
#include "cachecomm/window.hpp"
