#pragma once
// Finding the virtio-serial ports in the guest: /sys/class/virtio-ports/<vport>/name holds the
// port's name; the device is /dev/<vport> (no udev links needed).
#include <optional>
#include <string>

namespace smtlab::guest {

// /dev/<vport> for the port named `name`, waiting up to wait_s for it to show up; nullopt when
// there is none (e.g. a native run).
std::optional<std::string> find_virtio_port(const std::string& name, double wait_s = 0,
                                            const std::string& sys_root = "/sys/class/virtio-ports",
                                            const std::string& dev_root = "/dev");

}  // namespace smtlab::guest
