// MPI's blocking point-to-point calls, while the preload has nonblocking collectives pending: each
// becomes its nonblocking form and a wait that runs progress passes (progress_wait.hpp). Without
// it, a rank blocked in MPI_Recv from a peer that waits for one of its contributions (deferred by a
// full ring, nonblocking_channel.hpp) would hold that peer forever, where MPI's own collectives
// progress inside any MPI call. While nothing is pending, every call goes straight to MPI. MPI-4's
// large-count forms (MPI_Send_c...) likewise, where the MPI has them.
#include <mpi.h>

#include <cstddef>
#include <limits>
#include <memory>
#include <new>

#include "preload/progress_wait.hpp"

namespace preload = cachecomm::detail::preload;

namespace {

/// Waits for `request` while driving the pending operations; MPI's blocking wait once none is left.
int wait_driving(MPI_Request* request, MPI_Status* status) {
  int code = MPI_SUCCESS;
  bool blocked = false;
  preload::wait_with_progress<1>(&blocked, [&] {
    int flag = 0;
    code = PMPI_Test(request, &flag, status);
    return code != MPI_SUCCESS || flag != 0;
  });
  return blocked ? PMPI_Wait(request, status) : code;
}

/// Waits for a send and a receive (requests[0] the receive, whose status goes to `status`); returns
/// the first failure's class, as the blocking call would. A request the array's test left pending
/// beside a failed one (MPI_ERR_PENDING) is waited for: its buffers are the caller's.
int wait_pair_driving(MPI_Request requests[2], MPI_Status* status) {
  MPI_Status statuses[2];
  int code = MPI_SUCCESS;
  bool blocked = false;
  preload::wait_with_progress<1>(&blocked, [&] {
    int flag = 0;
    code = PMPI_Testall(2, requests, &flag, statuses);
    return code != MPI_SUCCESS || flag != 0;
  });
  if (blocked) code = PMPI_Waitall(2, requests, statuses);
  if (code == MPI_ERR_IN_STATUS) {
    int first_error = MPI_SUCCESS;
    for (int i = 0; i < 2; ++i) {
      int error = statuses[i].MPI_ERROR;
      if (error == MPI_ERR_PENDING) error = PMPI_Wait(&requests[i], &statuses[i]);
      if (error != MPI_SUCCESS && first_error == MPI_SUCCESS) first_error = error;
    }
    return first_error;
  }
  // A single-completion call leaves the status's error field as the caller set it.
  if (code == MPI_SUCCESS && status != MPI_STATUS_IGNORE) {
    const int caller_error = status->MPI_ERROR;
    *status = statuses[0];
    status->MPI_ERROR = caller_error;
  }
  return code;
}

/// After the send of a pair failed to start: withdraws its posted receive and returns `code`.
int cancel_receive(MPI_Request* receive, int code) {
  (void)PMPI_Cancel(receive);
  (void)PMPI_Wait(receive, MPI_STATUS_IGNORE);
  return code;
}

/// A send through `start` (MPI_Isend, MPI_Issend, MPI_Irsend, or their large-count forms) and a
/// wait that drives the pending operations.
template <typename Count>
int send_driving(int (*start)(const void*, Count, MPI_Datatype, int, int, MPI_Comm, MPI_Request*),
                 const void* buffer, Count count, MPI_Datatype type, int dest, int tag,
                 MPI_Comm comm) {
  MPI_Request request = MPI_REQUEST_NULL;
  const int code = start(buffer, count, type, dest, tag, comm, &request);
  return code != MPI_SUCCESS ? code : wait_driving(&request, MPI_STATUS_IGNORE);
}

/// A receive through `start` (MPI_Irecv or MPI_Irecv_c) and a wait that drives them.
template <typename Count>
int receive_driving(int (*start)(void*, Count, MPI_Datatype, int, int, MPI_Comm, MPI_Request*),
                    void* buffer, Count count, MPI_Datatype type, int source, int tag,
                    MPI_Comm comm, MPI_Status* status) {
  MPI_Request request = MPI_REQUEST_NULL;
  const int code = start(buffer, count, type, source, tag, comm, &request);
  return code != MPI_SUCCESS ? code : wait_driving(&request, status);
}

/// MPI_Sendrecv's driven form, for either count type.
template <typename Count>
int sendrecv_driving(int (*start_receive)(void*, Count, MPI_Datatype, int, int, MPI_Comm,
                                          MPI_Request*),
                     int (*start_send)(const void*, Count, MPI_Datatype, int, int, MPI_Comm,
                                       MPI_Request*),
                     const void* send_buffer, Count send_count, MPI_Datatype send_type, int dest,
                     int send_tag, void* recv_buffer, Count recv_count, MPI_Datatype recv_type,
                     int source, int recv_tag, MPI_Comm comm, MPI_Status* status) {
  MPI_Request requests[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  int code =
      start_receive(recv_buffer, recv_count, recv_type, source, recv_tag, comm, &requests[0]);
  if (code != MPI_SUCCESS) return code;
  code = start_send(send_buffer, send_count, send_type, dest, send_tag, comm, &requests[1]);
  if (code != MPI_SUCCESS) return cancel_receive(&requests[0], code);
  return wait_pair_driving(requests, status);
}

}  // namespace

extern "C" {

int MPI_Send(const void* buffer, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  if (!preload::drives_operations()) return PMPI_Send(buffer, count, type, dest, tag, comm);
  return send_driving(PMPI_Isend, buffer, count, type, dest, tag, comm);
}

int MPI_Ssend(const void* buffer, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  if (!preload::drives_operations()) return PMPI_Ssend(buffer, count, type, dest, tag, comm);
  return send_driving(PMPI_Issend, buffer, count, type, dest, tag, comm);
}

int MPI_Rsend(const void* buffer, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  if (!preload::drives_operations()) return PMPI_Rsend(buffer, count, type, dest, tag, comm);
  return send_driving(PMPI_Irsend, buffer, count, type, dest, tag, comm);
}

int MPI_Recv(void* buffer, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             MPI_Status* status) {
  if (!preload::drives_operations())
    return PMPI_Recv(buffer, count, type, source, tag, comm, status);
  return receive_driving(PMPI_Irecv, buffer, count, type, source, tag, comm, status);
}

int MPI_Sendrecv(const void* send_buffer, int send_count, MPI_Datatype send_type, int dest,
                 int send_tag, void* recv_buffer, int recv_count, MPI_Datatype recv_type,
                 int source, int recv_tag, MPI_Comm comm, MPI_Status* status) {
  if (!preload::drives_operations()) {
    return PMPI_Sendrecv(send_buffer, send_count, send_type, dest, send_tag, recv_buffer,
                         recv_count, recv_type, source, recv_tag, comm, status);
  }
  return sendrecv_driving(PMPI_Irecv, PMPI_Isend, send_buffer, send_count, send_type, dest,
                          send_tag, recv_buffer, recv_count, recv_type, source, recv_tag, comm,
                          status);
}

// The reply lands in a packed copy while the buffer is sent (a message sent with any type may be
// received as MPI_PACKED), then is unpacked over the buffer: the elements received, no more.
int MPI_Sendrecv_replace(void* buffer, int count, MPI_Datatype type, int dest, int send_tag,
                         int source, int recv_tag, MPI_Comm comm, MPI_Status* status) {
  if (!preload::drives_operations()) {
    return PMPI_Sendrecv_replace(buffer, count, type, dest, send_tag, source, recv_tag, comm,
                                 status);
  }
  int packed_bytes = 0;
  int type_bytes = 0;
  // A message whose packed size an int may not hold, or an argument MPI refuses, takes MPI's own
  // blocking call (which reports the error as the program expects).
  constexpr long long int_limit = std::numeric_limits<int>::max() / 2;
  if (count < 0 || PMPI_Type_size(type, &type_bytes) != MPI_SUCCESS || type_bytes < 0 ||
      static_cast<long long>(count) * type_bytes > int_limit ||
      PMPI_Pack_size(count, type, comm, &packed_bytes) != MPI_SUCCESS) {
    return PMPI_Sendrecv_replace(buffer, count, type, dest, send_tag, source, recv_tag, comm,
                                 status);
  }
  // Not zeroed (the reply overwrites what it uses); no memory for it: MPI's own call.
  const std::unique_ptr<std::byte[]> reply(new (std::nothrow)
                                               std::byte[static_cast<std::size_t>(packed_bytes)]);
  if (reply == nullptr) {
    return PMPI_Sendrecv_replace(buffer, count, type, dest, send_tag, source, recv_tag, comm,
                                 status);
  }
  int code = MPI_SUCCESS;
  MPI_Request requests[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  code = PMPI_Irecv(reply.get(), packed_bytes, MPI_PACKED, source, recv_tag, comm, &requests[0]);
  if (code != MPI_SUCCESS) return code;
  code = PMPI_Isend(buffer, count, type, dest, send_tag, comm, &requests[1]);
  if (code != MPI_SUCCESS) return cancel_receive(&requests[0], code);
  MPI_Status reply_status;
  reply_status.MPI_ERROR = MPI_SUCCESS;
  code = wait_pair_driving(requests, &reply_status);
  if (code != MPI_SUCCESS) return code;
  int received_bytes = 0;
  code = PMPI_Get_count(&reply_status, MPI_PACKED, &received_bytes);
  if (code != MPI_SUCCESS) return code;
  // More than the buffer holds (the packed size is an upper bound): what the blocking call reports.
  if (static_cast<long long>(received_bytes) > static_cast<long long>(count) * type_bytes) {
    (void)PMPI_Comm_call_errhandler(comm, MPI_ERR_TRUNCATE);
    return MPI_ERR_TRUNCATE;
  }
  if (type_bytes > 0 && received_bytes > 0) {
    int position = 0;
    code = PMPI_Unpack(reply.get(), received_bytes, &position, buffer, received_bytes / type_bytes,
                       type, comm);
  }
  if (status != MPI_STATUS_IGNORE) {
    const int caller_error = status->MPI_ERROR;
    *status = reply_status;
    status->MPI_ERROR = caller_error;
  }
  return code;
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  if (!preload::drives_operations()) return PMPI_Probe(source, tag, comm, status);
  int code = MPI_SUCCESS;
  bool blocked = false;
  preload::wait_with_progress<1>(&blocked, [&] {
    int flag = 0;
    code = PMPI_Iprobe(source, tag, comm, &flag, status);
    return code != MPI_SUCCESS || flag != 0;
  });
  return blocked ? PMPI_Probe(source, tag, comm, status) : code;
}

int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  if (!preload::drives_operations()) return PMPI_Mprobe(source, tag, comm, message, status);
  int code = MPI_SUCCESS;
  bool blocked = false;
  preload::wait_with_progress<1>(&blocked, [&] {
    int flag = 0;
    code = PMPI_Improbe(source, tag, comm, &flag, message, status);
    return code != MPI_SUCCESS || flag != 0;
  });
  return blocked ? PMPI_Mprobe(source, tag, comm, message, status) : code;
}

int MPI_Mrecv(void* buffer, int count, MPI_Datatype type, MPI_Message* message,
              MPI_Status* status) {
  if (!preload::drives_operations()) return PMPI_Mrecv(buffer, count, type, message, status);
  MPI_Request request = MPI_REQUEST_NULL;
  const int code = PMPI_Imrecv(buffer, count, type, message, &request);
  return code != MPI_SUCCESS ? code : wait_driving(&request, status);
}

#if MPI_VERSION >= 4
// MPI-4's large-count forms (MPICH 4-5, Intel MPI, the MPI-5 ABI; mpi4py calls them whenever the
// library has them): the same, through the large-count nonblocking calls.

int MPI_Send_c(const void* buffer, MPI_Count count, MPI_Datatype type, int dest, int tag,
               MPI_Comm comm) {
  if (!preload::drives_operations()) return PMPI_Send_c(buffer, count, type, dest, tag, comm);
  return send_driving(PMPI_Isend_c, buffer, count, type, dest, tag, comm);
}

int MPI_Ssend_c(const void* buffer, MPI_Count count, MPI_Datatype type, int dest, int tag,
                MPI_Comm comm) {
  if (!preload::drives_operations()) return PMPI_Ssend_c(buffer, count, type, dest, tag, comm);
  return send_driving(PMPI_Issend_c, buffer, count, type, dest, tag, comm);
}

int MPI_Rsend_c(const void* buffer, MPI_Count count, MPI_Datatype type, int dest, int tag,
                MPI_Comm comm) {
  if (!preload::drives_operations()) return PMPI_Rsend_c(buffer, count, type, dest, tag, comm);
  return send_driving(PMPI_Irsend_c, buffer, count, type, dest, tag, comm);
}

int MPI_Recv_c(void* buffer, MPI_Count count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
               MPI_Status* status) {
  if (!preload::drives_operations())
    return PMPI_Recv_c(buffer, count, type, source, tag, comm, status);
  return receive_driving(PMPI_Irecv_c, buffer, count, type, source, tag, comm, status);
}

int MPI_Sendrecv_c(const void* send_buffer, MPI_Count send_count, MPI_Datatype send_type, int dest,
                   int send_tag, void* recv_buffer, MPI_Count recv_count, MPI_Datatype recv_type,
                   int source, int recv_tag, MPI_Comm comm, MPI_Status* status) {
  if (!preload::drives_operations()) {
    return PMPI_Sendrecv_c(send_buffer, send_count, send_type, dest, send_tag, recv_buffer,
                           recv_count, recv_type, source, recv_tag, comm, status);
  }
  return sendrecv_driving(PMPI_Irecv_c, PMPI_Isend_c, send_buffer, send_count, send_type, dest,
                          send_tag, recv_buffer, recv_count, recv_type, source, recv_tag, comm,
                          status);
}

// A count that fits an int takes the int call's driven form; a larger one MPI's own call.
int MPI_Sendrecv_replace_c(void* buffer, MPI_Count count, MPI_Datatype type, int dest, int send_tag,
                           int source, int recv_tag, MPI_Comm comm, MPI_Status* status) {
  if (!preload::drives_operations() || count < 0 || count > std::numeric_limits<int>::max()) {
    return PMPI_Sendrecv_replace_c(buffer, count, type, dest, send_tag, source, recv_tag, comm,
                                   status);
  }
  return MPI_Sendrecv_replace(buffer, static_cast<int>(count), type, dest, send_tag, source,
                              recv_tag, comm, status);
}

int MPI_Mrecv_c(void* buffer, MPI_Count count, MPI_Datatype type, MPI_Message* message,
                MPI_Status* status) {
  if (!preload::drives_operations()) return PMPI_Mrecv_c(buffer, count, type, message, status);
  MPI_Request request = MPI_REQUEST_NULL;
  const int code = PMPI_Imrecv_c(buffer, count, type, message, &request);
  return code != MPI_SUCCESS ? code : wait_driving(&request, status);
}
#endif  // MPI_VERSION >= 4

}  // extern "C"
