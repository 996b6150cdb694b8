#!/bin/bash
# B12x — B12 (doc/benchmarks.md "B12") with lcpipe's port on net_af_xdp instead
# of net_af_packet, on the same veth, against the same kernel anchors in the
# same run. Root only; SKIP (77) otherwise (b12.sh's).
#
# AF_XDP hands lcpipe the frames the kernel received into the receive pool's
# own mbufs (the pool is the UMEM, DPDK 22.11 "zero copy" mode): no copy out of
# a packet ring as with af_packet, and a transmit without sendto() per burst.
# DPDK 22.11's driver keeps its fill ring's 2,048 mbufs after close; port_ethdev
# measures and declares them (lcp_stage_pktmbuf_pool_held), so the run's leak
# check still holds for everything else.
#
# Knobs: B12X_ROUNDS (5), B12X_SIZES ("64 1024"), B12X_CASES ("kernel
# kernel_min lcpipe1"), B12X_TIMING (1), B12X_CG (0: B12's callgrind run sees
# only user space, the same either way); every other B12_* knob of b12.sh.
set -eu
: "${B12X_SIZES:=64 1024}"
: "${B12X_CASES:=kernel kernel_min lcpipe1}"
: "${B12X_CG:=0}"
for k in ROUNDS SIZES CASES TIMING CG; do
	v=B12X_$k
	[ -n "${!v+x}" ] && export "B12_$k=${!v}"
done
export B12_DRIVER=af_xdp
exec bash "$(dirname "$0")/b12.sh"
