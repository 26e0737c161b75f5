// AddressSanitizer's defaults for a sanitizer build (SMTLAB_SANITIZE, RELIABILITY.md), linked into
// every executable that may load libvirt: the smtlab driver and the test programs. Empty otherwise.
//
// intercept_tls_get_addr=0: with it on (gcc 12's default), LeakSanitizer's exit-time check read a
// bogus dynamic-TLS range of a libvirt thread and died ("Tracer caught signal 11 ... LeakSanitizer
// has encountered a fatal error"), so a clean run of the driver exited 1. Leak checking stays on.
// ASAN_OPTIONS in the environment still overrides this.
#if defined(__SANITIZE_ADDRESS__)
extern "C" const char* __asan_default_options() { return "intercept_tls_get_addr=0"; }
#endif
