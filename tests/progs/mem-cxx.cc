// SPDX-License-Identifier: MIT
// Every C++ operator new and delete at sites of known totals (tests/e2e/mem-known.py).
#include <cstdlib>
#include <new>
#include <unistd.h>
#include <vector>

#include "mem-sites.h"

// Each site is a function of its own; its totals (bytes allocated, all freed unless said):
//   scalar_site          new S, delete: 40 (sized delete, _ZdlPvm)
//   array_site           new S[10], delete[]: 400
//   nothrow_site         new (nothrow) S 40, new (nothrow) S[5] 200: 240
//   aligned_site         new A (align 64) 128, new A[3] 384: 512
//   aligned_nothrow_site new (nothrow) A 128, new (nothrow) A[2] 256: 384
//   explicit_site        operator new(24), new[](48), new(32, align 32), new[](64, align 64),
//                        each freed by the matching operator delete: 168
//   vector_site          1000 push_back on a vector<int>: capacities 1, 2, 4 ... 1024,
//                        11 allocations of 8188 bytes in all
//   leak_site            new S never deleted: 40 leaked
//   throw_site           new of 2^62 bytes throws bad_alloc through the wrapper: nothing
//   after_throw_site     new T, delete: 56 (recording goes on after an exception)
// No two sites have the same code: gcc would fold them into one function (-fipa-icf).

struct S {
	char b[40];
};
struct T {
	char b[56];
};
struct alignas(64) A {
	char b[128];
};

SITE scalar_site()
{
	S *s = new S;
	KEEP(s);
	delete s;
}

SITE array_site()
{
	S *s = new S[10];
	KEEP(s);
	delete[] s;
}

SITE nothrow_site()
{
	S *s = new (std::nothrow) S;
	S *v = new (std::nothrow) S[5];
	KEEP(s);
	KEEP(v);
	operator delete(s, std::nothrow);
	operator delete[](v, std::nothrow);
}

SITE aligned_site()
{
	A *a = new A;
	A *v = new A[3];
	KEEP(a);
	KEEP(v);
	delete a;
	delete[] v;
}

SITE aligned_nothrow_site()
{
	A *a = new (std::nothrow) A;
	A *v = new (std::nothrow) A[2];
	KEEP(a);
	KEEP(v);
	operator delete(a, std::align_val_t(alignof(A)), std::nothrow);
	operator delete[](v, std::align_val_t(alignof(A)), std::nothrow);
}

SITE explicit_site()
{
	void *a = operator new(24);
	void *b = operator new[](48);
	void *c = operator new(32, std::align_val_t(32));
	void *d = operator new[](64, std::align_val_t(64));
	KEEP(a);
	KEEP(b);
	KEEP(c);
	KEEP(d);
	operator delete(a);
	operator delete[](b, 48);
	operator delete(c, std::align_val_t(32));
	operator delete[](d, 64, std::align_val_t(64));
}

SITE vector_site()
{
	std::vector<int> v;
	for (int i = 0; i < 1000; i++)
		v.push_back(i);
	KEEP(v.data());
}

static S *leaked;

SITE leak_site()
{
	leaked = new S;
	KEEP(leaked);
}

SITE throw_site()
{
#if defined(__SANITIZE_ADDRESS__)
	// AddressSanitizer's operator new reports a size this large as an error, not bad_alloc
	// (and its new, not ours, runs then: docs/pcollect.md, sanitizers).
	return;
#endif
	try {
		char *p = new char[1ull << 62];
		KEEP(p);
		_exit(3); // cannot have got it
	} catch (const std::bad_alloc &) {
	}
}

SITE after_throw_site()
{
	T *t = new T;
	KEEP(t);
	delete t;
}

int main()
{
	scalar_site();
	array_site();
	nothrow_site();
	aligned_site();
	aligned_nothrow_site();
	explicit_site();
	vector_site();
	leak_site();
	throw_site();
	after_throw_site();
	return mem_say_done();
}
