/* SPDX-License-Identifier: MIT */
/* A tiny JIT: machine code for a counting loop written into anonymous memory and run there. */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

int main(void)
{
	/* mov rcx, imm64; loop: dec rcx; jnz loop; ret  (x86-64) */
	static const unsigned char code[] = { 0x48, 0xb9, 0, 0, 0, 0, 0, 0, 0, 0,
					      0x48, 0xff, 0xc9, 0x75, 0xfb, 0xc3 };
	unsigned long long n = 1500000000ull; /* about 0.5 s */
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
	fn();
	printf("jit done\n");
	return 0;
}
