/* SPDX-License-Identifier: BSD-3-Clause
 * test_ip4.c — stack/eth.c, ip4.c, icmp.c through the public API (L0).
 *
 *   drops (loop)      one malformed frame per case -> exactly its own drop_*
 *                     counter, nothing transmitted, no other counter moves:
 *                     eth short / not ours / type, IP short, version, IHL < 5,
 *                     IHL beyond tot_len, tot_len > frame, tot_len < header,
 *                     checksum, TTL 0, not our address, MF, offset, last
 *                     fragment, protocol, ICMP checksum / short / type
 *   echo (loop)       echo request -> echo reply: same id, seq, payload (0, 1,
 *                     56, 57 odd, 1472 bytes), to the peer, valid checksums
 *   echo_padded       a 60-byte Ethernet frame (padding after tot_len) is
 *                     accepted and the padding is not echoed
 *   echo_ip_options   IHL 6 (options) is accepted; the reply has none
 *   echo_df           DF is not a fragment
 *   echo_burst        a burst of 32 requests -> 32 replies in order
 *   offload           tx_csum_offload: TCP frames carry STK_TX_* flags, a zero
 *                     IP checksum and the pseudo-header sum
 *   config            stk_create refuses bad configs with a message and leaks
 *                     nothing
 *   counters_named    every counter has its JSON name
 *   csum_reference    stk_csum_partial/fold against a byte-wise reference: 20,000
 *                     random buffers (exactly allocated), chained over even splits,
 *                     with each loop (scalar, SSE2, AVX2 where the CPU has it)
 *   csum_misaligned   every start offset 0..15 gives the same sum, each loop
 *   csum_avx2_upper   the AVX2 loop returns with the upper halves of the vector
 *                     registers clean (XINUSE, where the CPU reports it), with
 *                     and without a 64-byte turn: legacy-SSE code after it
 *                     would otherwise run slowed down
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#include "../t_check.h"

static uint8_t payload[2048];

static void
fill_payload(void)
{
	for (unsigned i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7 + 3);
}

static void
assert_echo_reply(const struct h_pkt *k, uint16_t id, uint16_t seq, const uint8_t *pl,
		  uint32_t plen)
{
	ck_assert_msg(k->is_icmp, "expected an ICMP message, got ethertype 0x%04x proto %u",
		      k->type, k->proto);
	ck_assert_uint_eq(k->icmp_type, STK_ICMP_ECHOREPLY);
	ck_assert_uint_eq(k->icmp_code, 0);
	ck_assert_uint_eq(k->icmp_id, id);
	ck_assert_uint_eq(k->icmp_seq, seq);
	ck_assert_uint_eq(k->plen, plen);
	ck_assert_msg(plen == 0 || memcmp(k->payload, pl, plen) == 0, "echo payload differs");
	ck_assert_uint_eq(k->ip_dst, H_PEER_IP);
	ck_assert_uint_eq(k->ip_src, H_OUR_IP);
	ck_assert_msg(memcmp(k->dst, H_PEER_MAC, 6) == 0, "reply to a wrong MAC");
	ck_assert_uint_eq(k->tot_len, 20 + 8 + plen);
}

/* ---- drops ---- */
enum drop_case {
	D_ETH_SHORT,
	D_ETH_EMPTY,
	D_ETH_NOT_OURS,
	D_ETH_TYPE,
	D_ETH_VLAN,
	D_IP_SHORT,
	D_IP_VERSION,
	D_IP_IHL4,
	D_IP_IHL_BEYOND,
	D_IP_TOT_GT_FRAME,
	D_IP_TOT_LT_HDR,
	D_IP_CSUM,
	D_IP_TTL0,
	D_IP_NOT_OURS,
	D_IP_MF,
	D_IP_OFFSET,
	D_IP_LAST_FRAG,
	D_IP_PROTO,
	D_ICMP_CSUM,
	D_ICMP_SHORT,
	D_ICMP_TYPE,
	D_ICMP_REPLY,
	D__N
};

static const struct {
	const char *name;
	enum stk_ctr ctr;
} drop_cases[D__N] = {
	[D_ETH_SHORT] = {"eth 13 bytes", STK_C_DROP_ETH_SHORT},
	[D_ETH_EMPTY] = {"eth 0 bytes", STK_C_DROP_ETH_SHORT},
	[D_ETH_NOT_OURS] = {"eth dst another unicast MAC", STK_C_DROP_ETH_NOT_OURS},
	[D_ETH_TYPE] = {"ethertype IPv6", STK_C_DROP_ETH_TYPE},
	[D_ETH_VLAN] = {"ethertype VLAN", STK_C_DROP_ETH_TYPE},
	[D_IP_SHORT] = {"19 bytes of IPv4", STK_C_DROP_IP_SHORT},
	[D_IP_VERSION] = {"version 6", STK_C_DROP_IP_VERSION},
	[D_IP_IHL4] = {"ihl 4", STK_C_DROP_IP_HDR_LEN},
	[D_IP_IHL_BEYOND] = {"ihl 15 beyond tot_len 40", STK_C_DROP_IP_HDR_LEN},
	[D_IP_TOT_GT_FRAME] = {"tot_len > frame", STK_C_DROP_IP_TOTAL_LEN},
	[D_IP_TOT_LT_HDR] = {"tot_len 19 < header", STK_C_DROP_IP_TOTAL_LEN},
	[D_IP_CSUM] = {"header checksum", STK_C_DROP_IP_CSUM},
	[D_IP_TTL0] = {"ttl 0", STK_C_DROP_IP_TTL},
	[D_IP_NOT_OURS] = {"dst 10.0.0.9", STK_C_DROP_IP_NOT_OURS},
	[D_IP_MF] = {"MF set", STK_C_DROP_IP_FRAGMENT},
	[D_IP_OFFSET] = {"offset 185 with MF", STK_C_DROP_IP_FRAGMENT},
	[D_IP_LAST_FRAG] = {"last fragment (offset, no MF)", STK_C_DROP_IP_FRAGMENT},
	[D_IP_PROTO] = {"protocol UDP", STK_C_DROP_IP_PROTO},
	[D_ICMP_CSUM] = {"ICMP checksum", STK_C_DROP_ICMP_BAD},
	[D_ICMP_SHORT] = {"ICMP 4 bytes", STK_C_DROP_ICMP_BAD},
	[D_ICMP_TYPE] = {"ICMP type 13 (timestamp)", STK_C_DROP_ICMP_TYPE},
	[D_ICMP_REPLY] = {"ICMP echo reply (unsolicited)", STK_C_DROP_ICMP_TYPE},
};

static void
set16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

START_TEST(drops)
{
	uint8_t f[H_MAX_FRAME];
	uint8_t *ip = f + 14;
	uint32_t n;
	struct h_snap s;
	int v = _i;

	fill_payload();
	h_create(H);
	n = h_build_icmp_echo(H, f, STK_ICMP_ECHO, 0x4242, 1, payload, 56);
	switch ((enum drop_case)v) {
	case D_ETH_SHORT:
		n = 13;
		break;
	case D_ETH_EMPTY:
		n = 0;
		break;
	case D_ETH_NOT_OURS:
		f[5] = 0x77;
		break;
	case D_ETH_TYPE:
		set16(f + 12, 0x86dd);
		break;
	case D_ETH_VLAN:
		set16(f + 12, STK_ETH_P_VLAN);
		break;
	case D_IP_SHORT:
		n = 14 + 19;
		break;
	case D_IP_VERSION:
		ip[0] = 0x65;
		h_fix_ip_csum(f);
		break;
	case D_IP_IHL4:
		ip[0] = 0x44;
		set16(ip + 10, 0); /* checksum over 16 bytes would be meaningless: use 20 */
		{
			uint8_t t = ip[0];

			ip[0] = 0x45;
			h_fix_ip_csum(f);
			ip[0] = t; /* wrong checksum too, but ihl is checked first (it bounds the
				      sum) */
		}
		break;
	case D_IP_IHL_BEYOND:
		ip[0] = 0x4f;
		set16(ip + 2, 40);
		n = 14 + 40;
		h_fix_ip_csum(f); /* over 60 bytes: past tot_len, still inside our array */
		break;
	case D_IP_TOT_GT_FRAME:
		set16(ip + 2, (uint16_t)(n - 14 + 1));
		h_fix_ip_csum(f);
		break;
	case D_IP_TOT_LT_HDR:
		set16(ip + 2, 19);
		h_fix_ip_csum(f);
		break;
	case D_IP_CSUM:
		ip[10] ^= 0x01;
		break;
	case D_IP_TTL0:
		ip[8] = 0;
		h_fix_ip_csum(f);
		break;
	case D_IP_NOT_OURS:
		ip[19] = 9;
		h_fix_ip_csum(f);
		break;
	case D_IP_MF:
		set16(ip + 6, STK_IP4_MF);
		h_fix_ip_csum(f);
		break;
	case D_IP_OFFSET:
		set16(ip + 6, STK_IP4_MF | 185);
		h_fix_ip_csum(f);
		break;
	case D_IP_LAST_FRAG:
		set16(ip + 6, 185);
		h_fix_ip_csum(f);
		break;
	case D_IP_PROTO:
		ip[9] = STK_IPPROTO_UDP;
		h_fix_ip_csum(f);
		break;
	case D_ICMP_CSUM:
		ip[20 + 2] ^= 0x10;
		break;
	case D_ICMP_SHORT:
		set16(ip + 2, 24);
		n = 14 + 24;
		h_fix_ip_csum(f);
		break;
	case D_ICMP_TYPE:
	case D_ICMP_REPLY:
		n = h_build_icmp_echo(H, f, v == D_ICMP_TYPE ? 13 : STK_ICMP_ECHOREPLY, 0x4242, 1,
				      payload, 56);
		break;
	case D__N:
		break;
	}
	h_snap(H, &s);
	h_inject(H, f, n, 0);
	ck_assert_msg(h_txq(H) == 0, "%s: a frame was transmitted", drop_cases[v].name);
	ck_assert_msg(h_delta(H, &s, drop_cases[v].ctr) == 1, "%s: %s +%llu, expected +1",
		      drop_cases[v].name, stk_counter_names[drop_cases[v].ctr],
		      (unsigned long long)h_delta(H, &s, drop_cases[v].ctr));
	ck_assert_msg(h_drops_delta(H, &s) == 1, "%s: %llu drop counters moved", drop_cases[v].name,
		      (unsigned long long)h_drops_delta(H, &s));
	ck_assert_uint_eq(h_delta(H, &s, STK_C_ICMP_ECHO_TX), 0);
	h_assert_only(H, &s, drop_cases[v].ctr, STK_C_ICMP_ECHO_RX, -1);
	ck_assert_uint_eq(stk_bufs_held(H->st), 0);
}
END_TEST

/* ---- echo ---- */
static const uint32_t echo_lens[] = {0, 1, 56, 57, 1472};

START_TEST(echo)
{
	uint8_t f[H_MAX_FRAME];
	uint32_t plen = echo_lens[_i], n;
	struct h_pkt *k;

	fill_payload();
	h_create(H);
	n = h_build_icmp_echo(H, f, STK_ICMP_ECHO, 0xbeef, (uint16_t)(100 + _i), payload, plen);
	h_inject(H, f, n, 0);
	k = h_tx_must(H, "echo reply");
	assert_echo_reply(k, 0xbeef, (uint16_t)(100 + _i), payload, plen);
	ck_assert_uint_eq(h_txq(H), 0);
	ck_assert_uint_eq(h_ctr(H, STK_C_ICMP_ECHO_RX), 1);
	ck_assert_uint_eq(h_ctr(H, STK_C_ICMP_ECHO_TX), 1);
	ck_assert_uint_eq(h_drops(H), 0);
	ck_assert_uint_eq(stk_bufs_held(H->st), 0);
}
END_TEST

START_TEST(echo_padded)
{
	uint8_t f[128];
	uint32_t n;
	struct h_pkt *k;

	fill_payload();
	h_create(H);
	n = h_build_icmp_echo(H, f, STK_ICMP_ECHO, 7, 9, payload, 4); /* 14+20+12 = 46 */
	ck_assert_uint_eq(n, 46);
	memset(f + n, 0xa5, 60 - n); /* non-zero padding: must be ignored, not summed */
	h_inject(H, f, 60, 0);
	k = h_tx_must(H, "echo reply to a padded frame");
	assert_echo_reply(k, 7, 9, payload, 4);
	ck_assert_uint_eq(h_drops(H), 0);
}
END_TEST

START_TEST(echo_ip_options)
{
	uint8_t f[H_MAX_FRAME], g[H_MAX_FRAME];
	uint32_t n;
	struct h_pkt *k;

	fill_payload();
	h_create(H);
	n = h_build_icmp_echo(H, f, STK_ICMP_ECHO, 3, 4, payload, 32);
	/* insert 4 option bytes (NOP NOP NOP EOL) after the 20-byte header */
	memcpy(g, f, 34);
	g[34] = 1, g[35] = 1, g[36] = 1, g[37] = 0;
	memcpy(g + 38, f + 34, n - 34);
	g[14] = 0x46;
	set16(g + 14 + 2, (uint16_t)(n - 14 + 4));
	h_fix_ip_csum(g);
	h_inject(H, g, n + 4, 0);
	k = h_tx_must(H, "echo reply to a request with IP options");
	assert_echo_reply(k, 3, 4, payload, 32);
	ck_assert_uint_eq(h_drops(H), 0);
}
END_TEST

START_TEST(echo_df)
{
	uint8_t f[H_MAX_FRAME];
	uint32_t n;

	fill_payload();
	h_create(H);
	n = h_build_icmp_echo(H, f, STK_ICMP_ECHO, 3, 4, payload, 10); /* the builder sets DF */
	ck_assert_uint_eq(f[14 + 6] & 0x40, 0x40);
	h_inject(H, f, n, 0);
	assert_echo_reply(h_tx_must(H, "echo reply with DF"), 3, 4, payload, 10);
}
END_TEST

START_TEST(echo_burst)
{
	static uint8_t frames[32][128];
	const uint8_t *fp[32];
	uint32_t lens[32];

	fill_payload();
	h_create(H);
	for (unsigned i = 0; i < 32; i++) {
		lens[i] = h_build_icmp_echo(H, frames[i], STK_ICMP_ECHO, 1, (uint16_t)i,
					    payload + i, 20);
		fp[i] = frames[i];
	}
	h_inject_burst(H, fp, lens, 32);
	for (unsigned i = 0; i < 32; i++)
		assert_echo_reply(h_tx_must(H, "burst reply"), 1, (uint16_t)i, payload + i, 20);
	ck_assert_uint_eq(h_ctr(H, STK_C_ICMP_ECHO_TX), 32);
	ck_assert_uint_eq(h_ctr(H, STK_C_RX_FRAMES), 32);
}
END_TEST

START_TEST(offload)
{
	struct stk_tcb *c;
	struct h_pkt *k;

	H->cfg.tx_csum_offload = true;
	h_create(H);
	c = stk_tcp_connect(H->st, h_ip(H_PEER_IP), 80, 1);
	ck_assert_ptr_nonnull(c);
	k = h_tx_tcp(H, "SYN"); /* the harness checks field values against the flags */
	ck_assert_msg((k->txflags & (STK_TX_IP_CSUM | STK_TX_TCP_CSUM)) ==
			      (STK_TX_IP_CSUM | STK_TX_TCP_CSUM),
		      "tx flags 0x%x with tx_csum_offload", k->txflags);
	ck_assert_uint_eq(k->frame[14 + 10], 0);
	ck_assert_uint_eq(k->frame[14 + 11], 0);
}
END_TEST

START_TEST(no_offload_flags)
{
	struct h_pkt *k;

	h_create(H);
	ck_assert_ptr_nonnull(stk_tcp_connect(H->st, h_ip(H_PEER_IP), 80, 1));
	k = h_tx_tcp(H, "SYN");
	ck_assert_msg(k->txflags == 0, "tx flags 0x%x without tx_csum_offload", k->txflags);
}
END_TEST

static const char *const bad_cfg[] = {
	"mtu 575",	     "mtu 9001",      "prefix 33",     "no ip", "17 static neighbours",
	"rto_min > rto_max", "multicast mac", "arp_entries 0", "ephemeral_port_min 0",
	"ephemeral_port_min > max",
};

static void
bad_cfg_apply(unsigned i, struct stk_config *c)
{
	switch (i) {
	case 0:
		c->mtu = 575;
		break;
	case 1:
		c->mtu = 9001;
		break;
	case 2:
		c->prefix = 33;
		break;
	case 3:
		c->ip = 0;
		break;
	case 4:
		c->n_static = 17;
		break;
	case 5:
		c->rto_min_ms = 5000, c->rto_max_ms = 1000;
		break;
	case 6:
		c->mac[0] = 1;
		break;
	case 7:
		c->arp_entries = 0;
		break;
	case 8:
		c->ephemeral_port_min = 0;
		break;
	case 9:
		c->ephemeral_port_min = 50001, c->ephemeral_port_max = 50000;
		break;
	}
}

START_TEST(config)
{
	char err[256];

	for (unsigned i = 0; i < sizeof(bad_cfg) / sizeof(bad_cfg[0]); i++) {
		struct h *x = h_new();

		bad_cfg_apply(i, &x->cfg);
		err[0] = 0;
		errno = 0;
		ck_assert_msg(h_try_create(x, err, sizeof(err)) == NULL, "%s accepted", bad_cfg[i]);
		ck_assert_msg(err[0] != 0, "%s refused without a message", bad_cfg[i]);
		ck_assert_msg(errno == EINVAL, "%s: errno %d", bad_cfg[i], errno);
		h_destroy(x); /* asserts nothing leaked */
	}
	h_create(H);
}
END_TEST

START_TEST(counters_named)
{
	for (int i = 0; i < STK_C__COUNT; i++) {
		ck_assert_ptr_nonnull(stk_counter_names[i]);
		ck_assert(stk_counter_names[i][0] != 0);
		for (int j = 0; j < i; j++)
			ck_assert_str_ne(stk_counter_names[i], stk_counter_names[j]);
	}
	ck_assert_str_eq(stk_counter_names[STK_C_TCP_RETRANSMITS], "tcp_retransmits");
	h_create(H);
	for (int i = 0; i < STK_C__COUNT; i++)
		ck_assert_uint_eq(stk_counters(H->st)[i], 0);
}
END_TEST

/* stk_csum_partial / stk_csum_fold (exported for tests and the plugin) against
 * the harness's byte-wise big-endian reference: 20,000 random buffers, lengths
 * 0..2047, start offsets 0..15, each ending at the end of its allocation (an
 * overread of the word-wise loops shows under ASan / valgrind), and sums
 * chained over an even split as the stack chains pseudo-header and segment */
static uint16_t
native16(uint16_t host_be_value)
{
	uint8_t b[2] = {(uint8_t)(host_be_value >> 8), (uint8_t)host_be_value};
	uint16_t v;

	memcpy(&v, b, 2);
	return v;
}

static bool
csum_equal(uint16_t a, uint16_t b)
{
	/* ones' complement has two zeros */
	return a == b || ((a == 0 || a == 0xffff) && (b == 0 || b == 0xffff));
}

static const char *const csum_impls[] = { "scalar", "sse2", "avx2" };

/* run stk_csum_partial's loop csum_impls[i]; false: not on this machine */
static bool
csum_impl_use(int i)
{
	if (stk_csum_use(csum_impls[i]) == 0) {
		ck_assert_str_eq(stk_csum_impl(), csum_impls[i]);
		return true;
	}
#if defined(__x86_64__)
	ck_assert_msg(i == 2, "no %s loop on x86-64", csum_impls[i]);
#endif
	return false;
}

START_TEST(csum_reference)
{
	uint64_t rng = 0x5eed;

	if (!csum_impl_use(_i))
		return;

	for (unsigned iter = 0; iter < 20000; iter++) {
		uint32_t len = (uint32_t)(h_rand(&rng) % 2048);
		uint32_t off = (uint32_t)(h_rand(&rng) % 16);
		/* misaligned start, last byte at the end of the allocation */
		uint8_t *mem = malloc(off + len ? off + len : 1);
		uint8_t *p = mem + off;
		uint16_t want, got, chained;
		uint32_t split;

		ck_assert_ptr_nonnull(mem);
		for (uint32_t i = 0; i < len; i++)
			p[i] = (uint8_t)h_rand(&rng);
		if (iter % 7 == 0)
			memset(p, 0xff, len); /* carries everywhere */
		want = native16(h_csum(p, len, 0));
		got = stk_csum_fold(stk_csum_partial(p, len, 0));
		ck_assert_msg(csum_equal(got, want), "len %u offset %u: 0x%04x, reference 0x%04x",
			      len, off, got, want);
		split = (uint32_t)(h_rand(&rng) % (len + 1)) & ~1u;
		chained = stk_csum_fold(
			stk_csum_partial(p + split, len - split, stk_csum_partial(p, split, 0)));
		ck_assert_msg(csum_equal(chained, want),
			      "len %u split %u: 0x%04x, reference 0x%04x", len, split, chained,
			      want);
		free(mem);
	}
}
END_TEST

START_TEST(csum_misaligned)
{
	/* the same bytes at every start offset 0..15 give the same sum */
	static uint8_t base[1600 + 16];
	uint64_t rng = 42;

	if (!csum_impl_use(_i))
		return;
	for (unsigned i = 0; i < sizeof(base); i++)
		base[i] = (uint8_t)h_rand(&rng);
	for (uint32_t len = 0; len < 200; len++) {
		uint16_t ref = native16(h_csum(base, len, 0));

		for (uint32_t off = 0; off < 16; off++) {
			uint8_t *q = malloc(off + len + 1);

			memcpy(q + off, base, len);
			ck_assert_msg(
				csum_equal(stk_csum_fold(stk_csum_partial(q + off, len, 0)), ref),
				"len %u at offset %u", len, off);
			free(q);
		}
	}
}
END_TEST

#if defined(__x86_64__)
/* XINUSE bit 2 (the upper halves of the vector registers are not in their
 * initial state), or -1 where XGETBV with ECX = 1 is not there
 * (CPUID.(EAX=0DH,ECX=1):EAX[2]) */
static int
avx_upper_in_use(void)
{
	uint32_t a, b, c, d, lo, hi;

	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0), "c"(0));
	if (a < 0xd)
		return -1;
	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0xd), "c"(1));
	if (!(a & 4))
		return -1;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(1));
	(void)hi;
	return (lo >> 2) & 1;
}
#endif

START_TEST(csum_avx2_upper)
{
#if defined(__x86_64__)
	static uint8_t buf[200];
	static const uint32_t lens[] = {10, 63, 64, 200};

	if (stk_csum_use("avx2") != 0 || avx_upper_in_use() < 0)
		return; /* no AVX2, or no way to see the state */
	for (unsigned i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		uint32_t sum = stk_csum_partial(buf, lens[i], 1);
		int dirty = avx_upper_in_use();

		ck_assert_msg(dirty == 0, "upper halves in use after a %u-byte AVX2 checksum",
			      lens[i]);
		ck_assert_uint_eq(stk_csum_fold(sum), 0xfffe);
	}
#endif
}
END_TEST

static void
ip4_tcases(Suite *s)
{
	TCase *tc = t_tcase(s, "drops", h_fixture_setup, h_fixture_teardown, 10);

	tcase_add_loop_test(tc, drops, 0, D__N);

	tc = t_tcase(s, "icmp", h_fixture_setup, h_fixture_teardown, 10);
	tcase_add_loop_test(tc, echo, 0, sizeof(echo_lens) / sizeof(echo_lens[0]));
	T_TESTS(tc, echo_padded, echo_ip_options, echo_df, echo_burst);

	tc = t_tcase(s, "csum", NULL, NULL, 30);
	tcase_add_loop_test(tc, csum_reference, 0, 3);
	tcase_add_loop_test(tc, csum_misaligned, 0, 3);
	T_TESTS(tc, csum_avx2_upper);

	T_TESTS(t_tcase(s, "misc", h_fixture_setup, h_fixture_teardown, 10), offload,
		no_offload_flags, config, counters_named);
}

T_MAIN("stack_ip4", ip4_tcases)
