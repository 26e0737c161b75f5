// The pure parts of remote hosts: stream transport in the domain XML (no local path reaches a
// remote host's XML), and the staging pool's names and volume XML. The libvirt side is
// exercised end to end by scripts/remote-check (it needs a libvirtd and sshd to talk to).
#include <catch2/catch.hpp>

#include <string>

#include "util/error.hpp"
#include "vm/connection.hpp"
#include "vm/domain_xml.hpp"
#include "vm/staging.hpp"

using namespace smtlab;
using namespace smtlab::vm;

namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

DomainSpec remote_spec() {
  DomainSpec s;
  s.name = "smtlab-cell-vm0-abcdef";
  s.topology = {1, 1, 2, 2};
  s.transport = Transport::streams;
  s.kernel = "/var/lib/smtlab/staging/kernel-aa";
  s.initrd = "/var/lib/smtlab/staging/smtlab-cell-vm0-abcdef.initrd";
  s.disk = "/var/lib/smtlab/staging/smtlab-cell-vm0-abcdef.qcow2";
  s.console_log = "/home/me/results/run/cells/x/console-vm0.log";  // this machine's, not the host's
  s.results_channel = "/home/me/results/run/cells/x/stream-vm0.jsonl";
  return s;
}

}  // namespace

TEST_CASE("stream transport: pty console, results port on a socket libvirt places, no local path in the XML",
          "[xml][remote]") {
  auto x = domain_xml(remote_spec());
  CHECK(has(x, "<serial type='pty'>"));
  CHECK(has(x, "<channel type='unix'>\n      <source mode='bind'/>\n"));
  CHECK(has(x, "<target type='virtio' name='org.smtlab.results.0'/>"));
  CHECK_FALSE(has(x, "<serial type='file'"));
  CHECK_FALSE(has(x, "<channel type='file'"));
  CHECK_FALSE(has(x, "/home/me"));
  CHECK(has(x, "<kernel>/var/lib/smtlab/staging/kernel-aa</kernel>"));
  CHECK(has(x, "<source file='/var/lib/smtlab/staging/smtlab-cell-vm0-abcdef.qcow2'/>"));
}

TEST_CASE("stream transport: no console or results port when none is asked for", "[xml][remote]") {
  auto s = remote_spec();
  s.console_log.clear();
  s.results_channel.clear();
  auto x = domain_xml(s);
  CHECK_FALSE(has(x, "<serial"));
  CHECK_FALSE(has(x, "<channel"));
}

TEST_CASE("stream transport refuses a control socket (a file on the libvirt host)", "[xml][remote]") {
  auto s = remote_spec();
  s.control_socket = "/tmp/c.sock";
  CHECK_THROWS_WITH(domain_xml(s), Catch::Contains("control socket"));
}

TEST_CASE("file transport is unchanged: the libvirt host writes the files", "[xml][remote]") {
  auto s = remote_spec();
  s.transport = Transport::files;
  auto x = domain_xml(s);
  CHECK(has(x, "<serial type='file'>"));
  CHECK(has(x, "<source path='/home/me/results/run/cells/x/console-vm0.log'/>"));
  CHECK(has(x, "<channel type='file'>"));
  CHECK_FALSE(has(x, "type='pty'"));
  CHECK_FALSE(has(x, "<channel type='unix'>"));
}

TEST_CASE("records keep a remote URI without its query (key files, transport options)", "[remote]") {
  CHECK(uri_for_records("qemu+ssh://root@host:2222/system?keyfile=/root/.ssh/k&no_verify=1") ==
        "qemu+ssh://root@host:2222/system");
  CHECK(uri_for_records("qemu+ssh://host/system") == "qemu+ssh://host/system");
  CHECK(uri_for_records("qemu:///embed?root=/run/smtlab-0/0") == "qemu:///embed?root=/run/smtlab-0/0");
}

TEST_CASE("staging pool: one name per directory, transient dir pool XML", "[staging]") {
  auto a = staging_pool_name("/var/lib/smtlab/staging");
  CHECK(a.rfind("smtlab-staging-", 0) == 0);
  CHECK(a.size() == std::string("smtlab-staging-").size() + 12);
  CHECK(a == staging_pool_name("/var/lib/smtlab//staging"));  // same directory, same pool
  CHECK(a != staging_pool_name("/srv/staging"));
  auto x = staging_pool_xml(a, "/var/lib/smtlab/staging");
  CHECK(has(x, "<pool type='dir'>"));
  CHECK(has(x, "<name>" + a + "</name>"));
  CHECK(has(x, "<path>/var/lib/smtlab/staging</path>"));
  CHECK(has(staging_pool_xml("p", "/srv/a&b"), "<path>/srv/a&amp;b</path>"));
  CHECK_THROWS_WITH(staging_pool_xml("p", "relative/dir"), Catch::Contains("absolute"));
}

TEST_CASE("staging: kernels and images are named by content, per-VM files by the unique domain name", "[staging]") {
  const std::string sha(64, 'a');
  CHECK(kernel_volume_name(sha) == "kernel-" + sha);
  CHECK_THROWS(kernel_volume_name("abc"));
  CHECK_THROWS(kernel_volume_name(std::string(63, 'a') + "/"));
  CHECK_THROWS(kernel_volume_name(std::string(64, 'A')));  // lower-case hex only
  CHECK(image_volume_name("0123456789abcdef") == "image-0123456789abcdef.qcow2");
  CHECK_THROWS(image_volume_name("../../etc"));
  CHECK_THROWS(image_volume_name("short"));
  CHECK(complete_marker_name("kernel-" + sha, 8123456) == "kernel-" + sha + ".complete-8123456");
  // A partial upload of another size is not taken as complete: the marker names the size.
  CHECK(complete_marker_name("image-x.qcow2", 1) != complete_marker_name("image-x.qcow2", 2));
  CHECK(vm_volume_name("smtlab-c1-vm0-a1b2c3", "initrd") == "smtlab-c1-vm0-a1b2c3.initrd");
  CHECK(vm_volume_name("smtlab-c1-vm1-a1b2c3", "qcow2") == "smtlab-c1-vm1-a1b2c3.qcow2");
  CHECK_THROWS(vm_volume_name("a/b", "initrd"));
  CHECK_THROWS(vm_volume_name("ok", "../x"));
  CHECK_THROWS(vm_volume_name("has space", "initrd"));
}

TEST_CASE("staging: per-VM volumes are told from kernels, images, markers and others' files", "[staging]") {
  CHECK(domain_of_vm_volume("smtlab-7922b7e0fa0f-vm0-8cc710.initrd") == "smtlab-7922b7e0fa0f-vm0-8cc710");
  CHECK(domain_of_vm_volume("smtlab-7922b7e0fa0f-vm12-8cc710.qcow2") == "smtlab-7922b7e0fa0f-vm12-8cc710");
  CHECK(domain_of_vm_volume("smtlab-a-b-vm1-abcdef.qcow2") == "smtlab-a-b-vm1-abcdef");
  CHECK(domain_of_vm_volume(vm_volume_name(unique_domain_name("c1", 3), "initrd")).rfind("smtlab-c1-vm3-", 0) == 0);
  CHECK(domain_of_vm_volume("kernel-" + std::string(64, 'a')).empty());
  CHECK(domain_of_vm_volume("image-0123456789abcdef.qcow2").empty());
  CHECK(domain_of_vm_volume("image-0123456789abcdef.qcow2.complete-12").empty());
  CHECK(domain_of_vm_volume("smtlab-c-vm0-8cc710.initrd.complete-1").empty());
  CHECK(domain_of_vm_volume("smtlab-c-vm0-8cc71.qcow2").empty());   // 5 hex
  CHECK(domain_of_vm_volume("smtlab-c-vmx-8cc710.qcow2").empty());
  CHECK(domain_of_vm_volume("smtlab--vm0-8cc710.qcow2").empty());    // no cell
  CHECK(domain_of_vm_volume("mydisk.qcow2").empty());
}

TEST_CASE("staging: a volume's mtime from its XML", "[staging]") {
  CHECK(volume_mtime("<volume><target><timestamps><atime>1.5</atime><mtime>1764748800.123456789</mtime>"
                     "</timestamps></target></volume>") == Approx(1764748800.123456789));
  CHECK(volume_mtime("<volume/>") == -1);
  CHECK(volume_mtime("<mtime>soon</mtime>") == -1);
  CHECK(volume_mtime("<mtime></mtime>") == -1);
}

TEST_CASE("staging: volume XML for uploads and overlays", "[staging]") {
  auto up = upload_volume_xml("kernel-x", 12345);
  CHECK(has(up, "<name>kernel-x</name>"));
  CHECK(has(up, "<capacity unit='bytes'>12345</capacity>"));
  CHECK(has(up, "<allocation unit='bytes'>0</allocation>"));
  CHECK(has(up, "<format type='raw'/>"));
  CHECK_THROWS(upload_volume_xml("a/b", 1));
  auto ov = overlay_volume_xml("smtlab-c-vm0-aaaaaa.qcow2", "/var/lib/smtlab/staging/image-d.qcow2");
  CHECK(has(ov, "<format type='qcow2'/>"));
  CHECK(has(ov, "<backingStore>"));
  CHECK(has(ov, "<path>/var/lib/smtlab/staging/image-d.qcow2</path>"));
  CHECK_FALSE(has(ov, "<capacity"));  // from the backing file
  CHECK_THROWS(overlay_volume_xml("x.qcow2", "image.qcow2"));
}
