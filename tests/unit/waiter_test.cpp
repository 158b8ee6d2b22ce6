#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "cachecomm/error.hpp"
#include "sync/waiter.hpp"

using namespace cachecomm::detail;

namespace {

cachecomm::wait_policy sleepy_policy(double timeout_seconds) {
  cachecomm::wait_policy policy;
  policy.spinning = false;
  policy.spin_iterations = 8;
  policy.yield_iterations = 4;
  policy.timeout_seconds = timeout_seconds;
  policy.liveness_interval_seconds = 0.01;
  return policy;
}

// A child process standing in for a peer rank; reaped (or killed) on scope exit.
class child_process {
 public:
  explicit child_process(int lifetime_ms) {
    m_pid = ::fork();
    if (m_pid == 0) {
      ::usleep(static_cast<useconds_t>(lifetime_ms) * 1000);
      ::_exit(0);
    }
  }
  ~child_process() {
    ::kill(m_pid, SIGKILL);
    ::waitpid(m_pid, nullptr, 0);
  }
  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;
  [[nodiscard]] pid_t pid() const { return m_pid; }

 private:
  pid_t m_pid;
};

}  // namespace

TEST(waiter, wakes_a_sleeper_when_the_flag_is_published) {
  node_wait_area area{};
  padded_flag flag{};
  waiter wait(sleepy_policy(10), &area, peer_monitor({::getpid(), ::getpid()}, 0), 0, {0, 1});
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    wait.publish(flag.value, 3);
  });
  wait.wait_reach(flag.value, 3, 1, "test");
  writer.join();
  EXPECT_EQ(flag.value.load(), 3U);
  EXPECT_EQ(area.sleepers.value.load(), 0U);
}

TEST(waiter, a_dead_peer_ends_the_wait_with_its_rank) {
  node_wait_area area{};
  padded_flag flag{};
  child_process peer(20);  // exits (and stays a zombie, unreaped) while we wait
  waiter wait(sleepy_policy(30), &area, peer_monitor({::getpid(), peer.pid()}, 0), 0, {5, 9});
  try {
    wait.wait_reach(flag.value, 1, 1, "test wait");
    FAIL() << "the wait returned although the peer died";
  } catch (const cachecomm::peer_failure& failure) {
    EXPECT_EQ(failure.peer_rank(), 9);
    EXPECT_NE(std::string(failure.what()).find("rank 9"), std::string::npos) << failure.what();
    EXPECT_NE(std::string(failure.what()).find("died"), std::string::npos) << failure.what();
  }
  EXPECT_NE(area.failure.value.load(), 0U) << "other waiters were not told";
}

TEST(waiter, a_live_peer_that_never_arrives_hits_the_deadline) {
  node_wait_area area{};
  padded_flag flag{};
  child_process peer(60'000);
  waiter wait(sleepy_policy(0.2), &area, peer_monitor({::getpid(), peer.pid()}, 0), 0, {0, 1});
  try {
    wait.wait_reach(flag.value, 1, 1, "test wait");
    FAIL() << "no deadline";
  } catch (const cachecomm::peer_failure& failure) {
    EXPECT_EQ(failure.peer_rank(), 1);
    EXPECT_NE(std::string(failure.what()).find("waited more than"), std::string::npos)
        << failure.what();
  }
}

TEST(peer_monitor, sees_exited_processes) {
  EXPECT_FALSE(peer_monitor::process_has_exited(::getpid()));
  pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  EXPECT_TRUE(peer_monitor::process_has_exited(child));
}
