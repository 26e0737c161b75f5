#pragma once
// Limits that more than one module enforces: the recipe loader refuses at plan time, with a
// location, what a run would otherwise refuse later. One number each, used by every check.
namespace smtlab::limits {

// vCPUs of one guest: QEMU's q35 machine (lab/vm/domain_xml.cpp) takes at most 288.
inline constexpr int kMaxVcpusPerVm = 288;

// Chat (lab/bench/chat.cpp): rooms and users are named room-NNN and user-NNN, three digits; a room
// needs two users for a message to go from one to another.
inline constexpr int kChatMaxRooms = 999;
inline constexpr int kChatMinUsers = 2;
inline constexpr int kChatMaxUsers = 999;

}  // namespace smtlab::limits
