#include "vm/event_loop.hpp"

#include <libvirt/libvirt.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "util/error.hpp"

namespace smtlab::vm {
namespace {

std::mutex g_mutex;
int g_users = 0;
std::thread g_thread;
std::atomic<bool> g_run{false};

void wake_once(int timer, void*) { virEventRemoveTimeout(timer); }

}  // namespace

void event_loop_acquire() {
  static std::once_flag registered;
  static int status = 0;
  std::call_once(registered, [] { status = virEventRegisterDefaultImpl(); });
  if (status != 0) throw Error("libvirt: cannot register the default event loop");
  std::lock_guard lock(g_mutex);
  if (g_users++ > 0) return;
  g_run = true;
  g_thread = std::thread([] {
    while (g_run.load()) {
      if (virEventRunDefaultImpl() < 0) break;
    }
  });
}

void event_loop_release() {
  std::lock_guard lock(g_mutex);
  if (g_users == 0 || --g_users > 0) return;
  g_run = false;
  // A zero-interval timer wakes the loop's poll(); the callback removes itself.
  virEventAddTimeout(0, wake_once, nullptr, nullptr);
  if (g_thread.joinable()) g_thread.join();
}

}  // namespace smtlab::vm
