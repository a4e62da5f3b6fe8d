/*
 * uml-xstate-shim.so: LD_PRELOADed into Debian 12's User-Mode Linux 6.1 (test and bench harness only,
 * never shipped) so that it can run a process on a host whose XSAVE area is larger than UML's buffer.
 *
 * Why: UML saves and restores each guest process's FPU registers with
 * ptrace(PTRACE_{GET,SET}REGSET, NT_X86_XSTATE) through a buffer sized at its build (2,696 bytes:
 * x87/SSE, AVX, AVX-512 and PKRU). The host kernel returns a shorter copy on GET, but refuses a SET
 * that is not exactly its whole XSAVE area (arch/x86/kernel/fpu/regset.c, xstateregs_set: "A whole
 * standard-format XSAVE buffer is needed", -EFAULT). On an AMX host that area is 11,008 bytes, so every
 * guest process dies before it runs ("userspace - ptrace set fp regs failed, errno = 14").
 *
 * What: a SET of another size than the host's area is passed on as exactly that area: UML's bytes
 * first and the rest zero when UML's buffer is shorter (AMX hosts), UML's bytes cut to the area when it
 * is longer (hosts without AVX-512, same EFAULT). Exact, not an approximation, when the header's
 * XSTATE_BV (bytes 512..519) marks no component beyond the bytes passed on: an unmarked component is
 * restored to its initial state, which is the state it was in. The traced processes are UML's host
 * processes, which never ask the host for AMX (arch_prctl ARCH_REQ_XCOMP_PERM; guest system calls never
 * reach the host), so AMX is never marked; and the host never marks a component it lacks. Otherwise
 * the shim cannot know a marked component's value and leaves the call alone (the original EFAULT).
 * Every other ptrace call is passed through untouched.
 */
#define _GNU_SOURCE
#include <cpuid.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/uio.h>

#define XSTATE_BV_OFFSET 512
#define LEGACY_AND_HEADER 576 /* x87/SSE area and the XSAVE header: always in the buffer */

typedef long (*ptrace_fn)(enum __ptrace_request, pid_t, void *, void *);

static ptrace_fn next_ptrace(void)
{
	static ptrace_fn fn;
	if (fn == NULL)
		fn = (ptrace_fn)dlsym(RTLD_NEXT, "ptrace");
	return fn;
}

/* The host's whole XSAVE area for the features the OS enabled (CPUID leaf 0xD, sub-leaf 0, EBX). */
static size_t host_xsave_size(void)
{
	unsigned int a, b, c, d;
	if (!__get_cpuid_count(0xd, 0, &a, &b, &c, &d))
		return 0;
	return b;
}

/* True when every component XSTATE_BV marks lies within the first len bytes (standard format). */
static int marked_within(const unsigned char *buf, size_t len)
{
	uint64_t bv;
	memcpy(&bv, buf + XSTATE_BV_OFFSET, sizeof bv);
	for (unsigned int i = 2; i < 64; i++) { /* 0 and 1 (x87, SSE) are in the legacy area */
		unsigned int size, offset, c, d;
		if (!(bv & (1ULL << i)))
			continue;
		if (!__get_cpuid_count(0xd, i, &size, &offset, &c, &d) || size == 0)
			return 0;
		if ((size_t)offset + size > len)
			return 0;
	}
	return 1;
}

long ptrace(enum __ptrace_request req, ...)
{
	va_list ap;
	va_start(ap, req);
	pid_t pid = va_arg(ap, pid_t);
	void *addr = va_arg(ap, void *);
	void *data = va_arg(ap, void *);
	va_end(ap);

	ptrace_fn next = next_ptrace();
	if (next == NULL) {
		errno = ENOSYS;
		return -1;
	}
	if (req != PTRACE_SETREGSET || (uintptr_t)addr != NT_X86_XSTATE || data == NULL)
		return next(req, pid, addr, data);

	struct iovec *iov = data;
	size_t full = host_xsave_size();
	size_t keep = iov->iov_len < full ? iov->iov_len : full;
	if (full < LEGACY_AND_HEADER || iov->iov_len == full || iov->iov_len < LEGACY_AND_HEADER ||
	    !marked_within(iov->iov_base, keep))
		return next(req, pid, addr, data);

	unsigned char *whole = calloc(1, full);
	if (whole == NULL) {
		errno = ENOMEM;
		return -1;
	}
	memcpy(whole, iov->iov_base, keep);
	struct iovec all = { .iov_base = whole, .iov_len = full };
	long r = next(req, pid, addr, &all);
	int saved = errno;
	free(whole);
	errno = saved;
	return r;
}
