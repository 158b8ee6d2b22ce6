#include "preload/nonblocking_staging.hpp"

#include <algorithm>
#include <cstring>
#include <exception>

#include "cachecomm/error.hpp"
#include "shm/memory_copy.hpp"

namespace cachecomm::detail::preload {

namespace {

/// Buffers above this are given back when a request is reused: a spare request keeps no more.
constexpr std::size_t kept_capacity = std::size_t{1} << 20;

void trim(std::vector<std::byte>& buffer) {
  if (buffer.capacity() > kept_capacity) std::vector<std::byte>().swap(buffer);
}

}  // namespace

void staged_buffers::stage(const nonblocking_staging& staging, nonblocking_call& call) {
  if (staging.result) {
    const staged_data& result = *staging.result;
    m_result.resize(std::max(result.bytes(), staging.result_bytes));
    if (staging.blocks != nullptr) {
      m_blocks.assign(staging.blocks, staging.blocks + staging.block_count);
    } else {
      m_blocks.assign(1, result_block{0, const_cast<void*>(result.buffer), result.count});
    }
    m_unpack_into = result;
    if (!result.layout.dense) {
      // MPI lets the program free its datatype after the start; the unpack needs it until the end.
      MPI_Datatype held = MPI_DATATYPE_NULL;
      const int code = PMPI_Type_dup(result.type, &held);
      if (code != MPI_SUCCESS) throw mpi_error("MPI_Type_dup", code);
      m_unpack_into.type = held;
    }
    m_unpack = true;
    call.recv = m_result.data();
  }
  if (staging.send) {
    const staged_data& send = *staging.send;
    std::byte* into = nullptr;
    if (staging.send_into_result) {
      into = m_result.data() + staging.send_at;
    } else {
      m_send.resize(std::max(send.bytes(), staging.send_bytes));
      into = m_send.data();
    }
    try {
      if (send.layout.dense) {
        if (send.bytes() != 0) copy_memory(into, send.buffer, send.bytes());
      } else {
        pack(send.buffer, send.count, send.type, send.layout, into, MPI_COMM_SELF);
      }
    } catch (...) {
      release();
      throw;
    }
    call.send = into;
  }
}

int staged_buffers::unpack_result(std::string& problem) {
  int result = MPI_SUCCESS;
  const staged_data& into = m_unpack_into;
  try {
    for (const result_block& block : m_blocks) {
      const std::byte* from = m_result.data() + block.from;
      if (into.layout.dense) {
        if (block.count != 0) copy_memory(block.to, from, block.count * into.layout.size);
      } else {
        unpack(from, block.count, into.type, into.layout, block.to, MPI_COMM_SELF);
      }
    }
  } catch (const std::exception& e) {
    problem = e.what();
    result = MPI_ERR_TYPE;
  }
  release();
  return result;
}

void staged_buffers::release() {
  if (m_unpack) {
    if (!m_unpack_into.layout.dense) PMPI_Type_free(&m_unpack_into.type);
    m_unpack_into = {};
    m_unpack = false;
  }
  trim(m_send);
  trim(m_result);
}

}  // namespace cachecomm::detail::preload
