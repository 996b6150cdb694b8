/* SPDX-License-Identifier: BSD-3-Clause
 * wire.h — byte order and the Internet checksum, written independently of
 * libstk's own helpers so that tests check the stack against a second
 * implementation. Header only: shared by the Check harness (stack/harness.c)
 * and the libFuzzer target fuzz/fuzz_tcp_input.c, which cannot link the
 * harness (it is built on Check).
 */
#ifndef STK_TEST_WIRE_H
#define STK_TEST_WIRE_H

#include <stddef.h>
#include <stdint.h>

/* big-endian loads and stores at any alignment */
static inline uint16_t
g16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t
g32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void
p16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void
p32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* the folded 16-bit ones' complement sum of data (big-endian words, an odd
 * last byte padded with zero) plus sum; 0xffff over data holding a valid
 * checksum */
static inline uint32_t
wire_sum(const void *data, size_t len, uint32_t sum)
{
	const uint8_t *p = data;
	uint64_t s = sum;

	while (len > 1) {
		s += (uint32_t)p[0] << 8 | p[1];
		p += 2;
		len -= 2;
	}
	if (len)
		s += (uint32_t)p[0] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint32_t)s;
}

#endif
