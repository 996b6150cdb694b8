# L2: plugins against the Linux kernel in a network namespace (root; skip 77 otherwise)
TESTS += kernel/port_kernel.sh
EXTRA_DIST += kernel/port_kernel.sh
