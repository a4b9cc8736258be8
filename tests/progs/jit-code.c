/* SPDX-License-Identifier: MIT */
/* A tiny JIT: machine code for a counting loop written into anonymous memory and run there,
   300 ms of CPU time in all. */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "burn.h"

int main(void)
{
	/* mov rcx, imm64; loop: dec rcx; jnz loop; ret  (x86-64) */
	static const unsigned char code[] = { 0x48, 0xb9, 0,    0,    0,    0,    0,    0,
					      0,    0,    0x48, 0xff, 0xc9, 0x75, 0xfb, 0xc3 };
	unsigned long long n = 300000; /* about 0.1 ms a call */
	long long end;
	void (*fn)(void);
	unsigned char *p;

#if !defined(__x86_64__)
	printf("jit=unsupported\n");
	return 77;
#endif
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	memcpy(p, code, sizeof(code));
	memcpy(p + 2, &n, sizeof(n));
	if (mprotect(p, 4096, PROT_READ | PROT_EXEC))
		return 1;
	fn = (void (*)(void))(void *)p;
	end = burn_cpu_ns() + 300000000ll;
	while (burn_cpu_ns() < end)
		fn();
	printf("jit done\n");
	return 0;
}
