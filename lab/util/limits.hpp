#pragma once
// Limits that more than one module enforces: the recipe loader refuses at plan time, with a
// location, what a run would otherwise refuse later. One number each, used by every check.
#include <cstdint>

namespace smtlab::limits {

// vCPUs of one guest: QEMU's q35 machine (lab/vm/domain_xml.cpp) takes at most 288.
inline constexpr int kMaxVcpusPerVm = 288;

// Chat (lab/bench/chat.cpp): rooms and users are named room-NNN and user-NNN, three digits; a room
// needs two users for a message to go from one to another.
inline constexpr int kChatMaxRooms = 999;
inline constexpr int kChatMinUsers = 2;
inline constexpr int kChatMaxUsers = 999;

// What one VM may write to the host's disk in one boot: its console log and its results channel
// (lab/vm/guest_output.hpp: the session checks the local files once a second and fails the cell of
// a VM that goes over; a remote guest's streams are cut at the same sizes by lab/vm/stream_pump).
// An honest boot comes nowhere near: a kernel's boot log is ~100 KiB; an agent writes a few records
// per iteration plus one vmstat row (~350 bytes) per monitor interval: ~3 MiB a day at the default
// 10 s, 12 MiB an hour at the smallest interval (0.1 s), so ~20 hours of that before the cap.
inline constexpr std::uint64_t kMaxConsoleBytesPerVm = 64ull << 20;
inline constexpr std::uint64_t kMaxChannelBytesPerVm = 256ull << 20;

}  // namespace smtlab::limits
