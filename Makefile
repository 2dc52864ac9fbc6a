# SPDX-License-Identifier: GPL-2.0-or-later
# pthread-tapset: SystemTap probes for pthread locking, and deadlock finders.
#
#   make demo          catch a real two-thread deadlock live (installs what it needs)
#   make check         the DejaGnu suite, every runtime this host can run
#   make installcheck  install for real, test the installed tree with plain stap, uninstall
#   make bench         what each script costs, against its floor and the references
#   make install       tapset (into stap's own tapset directory), scripts,
#                      preload library, man pages
#   make lint          compiler warnings and cppcheck on all C, shellcheck,
#                      stap -p2 of the tapset and scripts on both runtimes
#
# check: RUNTIME="bpf lkm" (default; either alone selects it) runs the
# suite per runtime, the kernel-module one in a VM where modules cannot be
# loaded here; SOURCES="preload glibc functions" the event sources.

PREFIX     ?= /usr/local
DESTDIR    ?=
datadir    ?= $(PREFIX)/share
libdir     ?= $(PREFIX)/lib
bindir     ?= $(PREFIX)/bin
mandir     ?= $(datadir)/man
# stap reads tapsets from its own directory only (or -I DIR): install there
STAP_TAPSETDIR := $(shell tools/stap-tapset-dir)
tapsetdir  ?= $(STAP_TAPSETDIR)
scriptdir  ?= $(datadir)/pthread-tapset/scripts
pkglibdir  ?= $(libdir)/pthread-tapset

CC         ?= cc
CFLAGS     ?= -O2 -g
WARN       := -Wall -Wextra -Werror
BUILD      := build
GLIBC_MARKS := $(BUILD)/glibc-marks

# the tapset: the public vocabulary (pthread.stp), the reports' shared
# helpers (pthread_report.stp) and the private layers; bpf/ and linux/ hold
# each runtime's own helpers (stap picks the directory)
TAPSET_FILES := tapset/pthread.stp tapset/pthread_report.stp tapset/pthread_sources.stp tapset/pthread_marks.stp

# both runtimes: BPF natively; the kernel-module runtime natively where
# this kernel loads modules, else in a qemu VM (lkm-vm/, set up by check)
RUNTIME    ?= bpf lkm
SOURCES    ?= preload glibc functions

FIXTURES   := self-relock abba cycle-3 cycle-5 cycle-8 recursive-relock \
              errorcheck-relock trylock-fail contention mutex-calls \
              many-waiters quick-exit crash-segv crash-abort steady static \
              hung-mix rwlock-cycle condvar-waiters rwlock-calls cond-calls thread-calls \
              lock-waits lock-holds lock-orders lock-orders-benign lock-classes lock-churn
FIXTURE_BINS := $(addprefix $(BUILD)/fixtures/,$(FIXTURES))
# built with musl-gcc (musl-tools), for the tests only
TEST_FIXTURE_BINS := $(BUILD)/fixtures/musl-quick-exit
LAUNCHER_BINS := $(BUILD)/launcher/start-gate $(BUILD)/launcher/end-with-target $(BUILD)/launcher/who \
                 $(BUILD)/launcher/lockorder-cycles $(BUILD)/launcher/whole-lines

# Debian packages: to build and run (make deps), to test and lint (make test-deps)
DEB_PACKAGES  := systemtap systemtap-sdt-dev gcc make libc6-dev binutils
TEST_PACKAGES := dejagnu expect cppcheck shellcheck musl-tools
# the benchmark's references (Valgrind's Helgrind and DRD, bpftrace), its
# real program (pigz), and bpftool (the BPF maps' memory)
BENCH_PACKAGES := valgrind pigz bpftrace bpftool

.PHONY: all deps test-deps demo check installcheck bench install uninstall lint \
        clean glibc-marks man test-fixtures print-%

all: tapset/pthread_marks.stp doc/marks.md $(BUILD)/libpthread-marks.so $(LAUNCHER_BINS) $(FIXTURE_BINS) $(BUILD)/bench/workloads $(BUILD)/bench/timed man

# one page per documented probe and function, from tapset/pthread.stp and
# tapset/pthread_report.stp
man: $(BUILD)/man/.stamp
$(BUILD)/man/.stamp: tapset/pthread.stp tapset/pthread_report.stp tools/tapset-man
	rm -rf $(BUILD)/man && tools/tapset-man tapset/pthread.stp $(BUILD)/man && \
	  tools/tapset-man tapset/pthread_report.stp $(BUILD)/man && touch $@

# (built into a temporary name and renamed: pthread-stap builds these on
# demand, and two sessions may start at once)
$(BUILD)/libpthread-marks.so: preload/pthread-marks.c $(BUILD)/include/pthread-marks.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(WARN) -I$(BUILD)/include -fPIC -shared -o $@.tmp.$$$$ $< -ldl && mv $@.tmp.$$$$ $@

# tapset/marks.list is the one list of marks: the rest is derived from it
# (tools/marks-gen).  The generated tapset file and doc are kept in the tree,
# so that the tapset reads without a build; `make lint` checks they are current.
$(BUILD)/include/pthread-marks.h: tapset/marks.list tools/marks-gen
	@mkdir -p $(@D)
	tools/marks-gen header > $@.tmp.$$$$ && mv $@.tmp.$$$$ $@
tapset/pthread_marks.stp: tapset/marks.list tools/marks-gen
	tools/marks-gen tapset > $@.tmp && mv $@.tmp $@
doc/marks.md: tapset/marks.list tools/marks-gen
	tools/marks-gen doc > $@.tmp && mv $@.tmp $@

$(BUILD)/launcher/%: launcher/%.c launcher/proc.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(WARN) -o $@.tmp.$$$$ $< && mv $@.tmp.$$$$ $@

$(BUILD)/fixtures/cycle-%: c-fixtures/cycle.c c-fixtures/fixture.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(WARN) -DTHREADS=$* -pthread -o $@ $<

$(BUILD)/fixtures/crash-segv: c-fixtures/crash.c c-fixtures/fixture.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(WARN) -pthread -o $@ $<

$(BUILD)/fixtures/crash-abort: c-fixtures/crash.c c-fixtures/fixture.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(WARN) -DCRASH_ABORT -pthread -o $@ $<

# statically linked (glibc's libc.a: no marks on Debian), for the
# launcher's refusal of a program whose locks it cannot see
$(BUILD)/fixtures/static: c-fixtures/quick-exit.c c-fixtures/fixture.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(WARN) -static -pthread -o $@ $<

$(BUILD)/fixtures/musl-quick-exit: c-fixtures/quick-exit.c c-fixtures/fixture.h
	@mkdir -p $(@D)
	musl-gcc $(CFLAGS) $(WARN) -pthread -o $@ $<

$(BUILD)/fixtures/lock-orders $(BUILD)/fixtures/lock-orders-benign $(BUILD)/fixtures/lock-churn: c-fixtures/lock-orders.h

$(BUILD)/fixtures/%: c-fixtures/%.c c-fixtures/fixture.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(WARN) -pthread -o $@ $<

$(BUILD)/bench/%: bench/%.c
	@mkdir -p $(@D)
	$(CC) -O2 $(WARN) -pthread -o $@ $<

test-fixtures: $(TEST_FIXTURE_BINS)

deps:
	@tools/install-deps $(DEB_PACKAGES)

test-deps:
	@tools/install-deps $(DEB_PACKAGES) $(TEST_PACKAGES)

glibc-marks:
	@tools/fetch-glibc-with-marks $(GLIBC_MARKS)

demo: deps all
	@tools/demo

check: test-deps all test-fixtures glibc-marks
	@RUNTIME="$(RUNTIME)" SOURCES="$(SOURCES)" testsuite/run

# Installs into the real system (default prefixes), runs the install tests
# (testsuite/pthread.install) with plain stap on both runtimes, uninstalls,
# and checks that nothing is left.
installcheck: test-deps all test-fixtures glibc-marks
	@RUNTIME="$(RUNTIME)" SOURCES="$(SOURCES)" INSTALLCHECK=1 testsuite/run

bench: deps all glibc-marks
	@tools/install-deps $(BENCH_PACKAGES)
	@tools/bench

lint: test-deps all glibc-marks
	$(CC) $(WARN) -I$(BUILD)/include -fsyntax-only -fPIC preload/pthread-marks.c
	$(CC) $(WARN) -fsyntax-only host/memlock-shim.c
	$(CC) $(WARN) -fsyntax-only lkm-vm/stapsh-relay.c
	for f in bench/*.c; do $(CC) $(WARN) -fsyntax-only -pthread $$f || exit 1; done
	for f in launcher/*.c; do $(CC) $(WARN) -fsyntax-only $$f || exit 1; done
	for f in c-fixtures/*.c; do $(CC) $(WARN) -DTHREADS=3 -fsyntax-only -pthread $$f || exit 1; done
	cppcheck --quiet --error-exitcode=1 --enable=warning,portability,performance \
	    --suppress=missingIncludeSystem -DTHREADS=3 -I$(BUILD)/include preload host launcher c-fixtures bench lkm-vm
	tools/lint

# The installed tapset reads events from the system libc's marks where it has
# them; otherwise from the installed preload library (programs then run with
# LD_PRELOAD=$(pkglibdir)/libpthread-marks.so).
install: $(BUILD)/libpthread-marks.so $(BUILD)/launcher/lockorder-cycles man
	install -d $(DESTDIR)$(tapsetdir)/bpf $(DESTDIR)$(tapsetdir)/linux $(DESTDIR)$(scriptdir) \
	    $(DESTDIR)$(pkglibdir) $(DESTDIR)$(mandir)/man8 $(DESTDIR)$(mandir)/man3
	install -m 644 $(TAPSET_FILES) $(DESTDIR)$(tapsetdir)/
	install -m 644 tapset/bpf/pthread_runtime.stp $(DESTDIR)$(tapsetdir)/bpf/
	install -m 644 tapset/linux/pthread_runtime.stp $(DESTDIR)$(tapsetdir)/linux/
	install -m 755 $(BUILD)/libpthread-marks.so $(DESTDIR)$(pkglibdir)/
	install -m 755 tools/pthread-marks-stpm tools/marks-source tools/marks-gen $(DESTDIR)$(pkglibdir)/
	install -m 644 tapset/marks.list $(DESTDIR)$(pkglibdir)/
	install -m 755 $(BUILD)/launcher/lockorder-cycles $(DESTDIR)$(pkglibdir)/
	install -m 755 scripts/*.stp $(DESTDIR)$(scriptdir)/
	install -m 644 scripts/*.meta $(DESTDIR)$(scriptdir)/
	install -m 644 man/*.8 $(DESTDIR)$(mandir)/man8/
	install -m 644 $(BUILD)/man/*.3stap $(DESTDIR)$(mandir)/man3/
	@src=$$(tools/marks-source) || src=$(pkglibdir)/libpthread-marks.so; \
	 read=$$src; [ "$$src" != $(pkglibdir)/libpthread-marks.so ] || read=$(DESTDIR)$$src; \
	 echo "install: the pthread tapset (in $(tapsetdir)) reads its events from $$src"; \
	 tools/pthread-marks-stpm --as "$$src" "$$read" $(DESTDIR)$(tapsetdir)

uninstall:
	rm -f $(addprefix $(DESTDIR)$(tapsetdir)/,$(notdir $(TAPSET_FILES))) \
	      $(DESTDIR)$(tapsetdir)/pthread_marks_lib.stpm \
	      $(DESTDIR)$(tapsetdir)/bpf/pthread_runtime.stp $(DESTDIR)$(tapsetdir)/linux/pthread_runtime.stp \
	      $(DESTDIR)$(tapsetdir)/bpf/pthread_marks_args.stpm $(DESTDIR)$(tapsetdir)/linux/pthread_marks_args.stpm
	rm -rf $(DESTDIR)$(scriptdir) $(DESTDIR)$(pkglibdir)
	rmdir $(DESTDIR)$(datadir)/pthread-tapset 2>/dev/null || true
	rm -f $(addprefix $(DESTDIR)$(mandir)/man8/,$(notdir $(wildcard man/*.8)))
	rm -f $(DESTDIR)$(mandir)/man3/probe::pthread.*.3stap $(DESTDIR)$(mandir)/man3/function::pthread_*.3stap

# make print-VAR: a variable's value (for the test scripts)
print-%:
	@echo '$($*)'

clean:
	lkm-vm/stop
	rm -rf $(BUILD)/man $(BUILD)/include $(BUILD)/fixtures $(BUILD)/libpthread-marks.so $(BUILD)/marks \
	       $(BUILD)/test-* $(BUILD)/bench $(BUILD)/host $(BUILD)/launcher $(BUILD)/run $(BUILD)/lint
