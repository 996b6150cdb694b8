#!/bin/bash
# L2 (e'): tcp_loss.sh with lcpipe's port on net_af_packet on a veth pair in
# place of the tap (LCP_TCP_PORT=af_packet in tcp_lib.sh), the transport of
# B15's second variant (doc/benchmarks.md): the same assertions, byte-exact
# transfers each way under 1/50 loss.
LCP_TCP_PORT=af_packet exec bash "$(dirname "$0")/tcp_loss.sh"
