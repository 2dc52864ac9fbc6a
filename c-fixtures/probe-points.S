/* SPDX-License-Identifier: GPL-2.0-or-later */
/* c-fixtures/probe-points.S - a shared library (libprobe-points.so) whose
   functions are named as libc's pthread functions, each starting with code
   that tells tools/pthread-marks-stpm --probe-points where the functions
   source's uprobe goes: expect_NAME marks that instruction (the entry,
   where the probe must stay there).  Never run, only read. */

	.text

/* loads and arithmetic into registers that are not its argument, then a
   conditional jump (emulated): the probe goes to the jump */
	.globl	pthread_mutex_lock, expect_pthread_mutex_lock
	.type	pthread_mutex_lock, @function
pthread_mutex_lock:
	endbr64
	mov	0x10(%rdi), %eax
	mov	%eax, %edx
	and	$0x7c, %eax
	cmpl	$0, 4(%rdi)
expect_pthread_mutex_lock:
	jne	1f
	xor	%eax, %eax
1:	ret
	.size	pthread_mutex_lock, .-pthread_mutex_lock

/* a move into the second argument's register of a one-argument function,
   then a jump: the jump */
	.globl	pthread_mutex_unlock, expect_pthread_mutex_unlock
	.type	pthread_mutex_unlock, @function
pthread_mutex_unlock:
	mov	$1, %esi
expect_pthread_mutex_unlock:
	jmp	1f
1:	xor	%eax, %eax
	ret
	.size	pthread_mutex_unlock, .-pthread_mutex_unlock

/* a store before the jump (the handler would read changed memory): the
   entry */
	.globl	pthread_mutex_trylock, expect_pthread_mutex_trylock
	.type	pthread_mutex_trylock, @function
pthread_mutex_trylock:
expect_pthread_mutex_trylock:
	movl	$0, 4(%rdi)
	jne	1f
1:	ret
	.size	pthread_mutex_trylock, .-pthread_mutex_trylock

/* its argument overwritten before the jump: the entry */
	.globl	pthread_rwlock_rdlock, expect_pthread_rwlock_rdlock
	.type	pthread_rwlock_rdlock, @function
pthread_rwlock_rdlock:
expect_pthread_rwlock_rdlock:
	mov	8(%rdi), %rdi
	test	%rdi, %rdi
	je	1f
1:	ret
	.size	pthread_rwlock_rdlock, .-pthread_rwlock_rdlock

/* the stack pointer moved (the return address no longer at rsp): the entry */
	.globl	pthread_rwlock_wrlock, expect_pthread_rwlock_wrlock
	.type	pthread_rwlock_wrlock, @function
pthread_rwlock_wrlock:
expect_pthread_rwlock_wrlock:
	push	%rbx
	je	1f
1:	pop	%rbx
	ret
	.size	pthread_rwlock_wrlock, .-pthread_rwlock_wrlock

/* rbp written (a stack walk starts from it): the entry */
	.globl	pthread_rwlock_tryrdlock, expect_pthread_rwlock_tryrdlock
	.type	pthread_rwlock_tryrdlock, @function
pthread_rwlock_tryrdlock:
expect_pthread_rwlock_tryrdlock:
	mov	%rdi, %rbp
	je	1f
1:	ret
	.size	pthread_rwlock_tryrdlock, .-pthread_rwlock_tryrdlock

/* a jump from later in the function lands before the first jump (the
   probe would fire twice in one call): the entry */
	.globl	pthread_rwlock_unlock, expect_pthread_rwlock_unlock
	.type	pthread_rwlock_unlock, @function
pthread_rwlock_unlock:
expect_pthread_rwlock_unlock:
	mov	(%rdi), %eax
2:	test	%eax, %eax
	je	1f
	sub	$1, %eax
	jmp	2b
1:	ret
	.size	pthread_rwlock_unlock, .-pthread_rwlock_unlock

/* a jump from another function lands on the first jump: the entry */
	.globl	pthread_rwlock_trywrlock, expect_pthread_rwlock_trywrlock
	.type	pthread_rwlock_trywrlock, @function
pthread_rwlock_trywrlock:
expect_pthread_rwlock_trywrlock:
	mov	(%rdi), %eax
3:	je	1f
1:	ret
	.size	pthread_rwlock_trywrlock, .-pthread_rwlock_trywrlock
	.type	elsewhere, @function
elsewhere:
	jmp	3b
	.size	elsewhere, .-elsewhere

/* a two-argument function writing rdx (no argument of its): the jump */
	.globl	pthread_cond_wait, expect_pthread_cond_wait
	.type	pthread_cond_wait, @function
pthread_cond_wait:
	mov	%rsi, %rdx
	lea	8(%rdi), %rcx
expect_pthread_cond_wait:
	call	1f
1:	add	$8, %rsp
	ret
	.size	pthread_cond_wait, .-pthread_cond_wait

/* the same start in a three-argument function (rdx is its third): the
   entry */
	.globl	pthread_cond_timedwait, expect_pthread_cond_timedwait
	.type	pthread_cond_timedwait, @function
pthread_cond_timedwait:
expect_pthread_cond_timedwait:
	mov	%rsi, %rdx
	jne	1f
1:	ret
	.size	pthread_cond_timedwait, .-pthread_cond_timedwait

/* a jump first: already where it costs least */
	.globl	pthread_cond_signal, expect_pthread_cond_signal
	.type	pthread_cond_signal, @function
pthread_cond_signal:
expect_pthread_cond_signal:
	jmp	1f
1:	ret
	.size	pthread_cond_signal, .-pthread_cond_signal

/* an old version of it (pthread_cond_signal@FIXTURE_OLD beside the
   default @@FIXTURE_NEW: c-fixtures/probe-points.map), as glibc keeps its
   compatibility condition-variable functions, ending in a jump to the
   current one: left out (the probes would see the call twice) */
	.globl	old_pthread_cond_signal
	.type	old_pthread_cond_signal, @function
old_pthread_cond_signal:
	jmp	pthread_cond_signal
	.size	old_pthread_cond_signal, .-old_pthread_cond_signal
	.symver	old_pthread_cond_signal, pthread_cond_signal@FIXTURE_OLD

/* an instruction it does not know (an exchange writes both operands): the
   entry */
	.globl	pthread_cond_broadcast, expect_pthread_cond_broadcast
	.type	pthread_cond_broadcast, @function
pthread_cond_broadcast:
expect_pthread_cond_broadcast:
	xchg	%eax, (%rdi)
	jne	1f
1:	ret
	.size	pthread_cond_broadcast, .-pthread_cond_broadcast

/* more than 12 instructions before the jump: the entry */
	.globl	pthread_join, expect_pthread_join
	.type	pthread_join, @function
pthread_join:
expect_pthread_join:
	.rept 13
	add	$1, %eax
	.endr
	jne	1f
1:	ret
	.size	pthread_join, .-pthread_join

/* a test, then a conditional jump of one byte's displacement: the jump */
	.globl	pthread_mutex_init, expect_pthread_mutex_init
	.type	pthread_mutex_init, @function
pthread_mutex_init:
	test	%rdi, %rdi
expect_pthread_mutex_init:
	je	1f
1:	ret
	.size	pthread_mutex_init, .-pthread_mutex_init

	.section .note.GNU-stack, "", @progbits
