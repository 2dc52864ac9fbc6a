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
# loaded here; SOURCES="preload glibc functions" the event sources (all
# of tapset/sources.list by default).

VERSION    := $(shell cat VERSION)
PREFIX     ?= /usr/local
DESTDIR    ?=
datadir    ?= $(PREFIX)/share
libdir     ?= $(PREFIX)/lib
libexecdir ?= $(PREFIX)/libexec
bindir     ?= $(PREFIX)/bin
mandir     ?= $(datadir)/man
# stap reads tapsets from its own directory only (or -I DIR): install there
# (asked once, and only by a rule that uses it: pthread-stap's make -q of
# the checkout's helpers, at every session's start, does not)
STAP_TAPSETDIR = $(eval STAP_TAPSETDIR := $$(shell tools/stap-tapset-dir))$(STAP_TAPSETDIR)
tapsetdir  ?= $(STAP_TAPSETDIR)
scriptdir  ?= $(datadir)/pthread-tapset/scripts
pkglibdir  ?= $(libdir)/pthread-tapset
pkglibexecdir ?= $(libexecdir)/pthread-tapset
# pthread-tapset-export.service (pthread-stap export, always on), installed
# but not enabled
systemdunitdir ?= $(libdir)/systemd/system
# what the installed product derives on the machine it runs on (the
# tapset's macros for this host's libc, the BPF runtime's stand-in kernel
# build tree, pthread-stap's per-library macros and run-time files)
statedir   ?= /var/lib/pthread-tapset

CC         ?= cc
CFLAGS     ?= -O2 -g
WARN       := -Wall -Wextra -Werror
BUILD      ?= build
GLIBC_MARKS := $(BUILD)/glibc-marks

# the tapset: the public vocabulary (pthread-tapset.stp), the reports' shared
# helpers (pthread-tapset-report.stp) and the private layers; bpf/ and linux/ hold
# each runtime's own helpers (stap picks the directory).  Every file name
# starts with pthread-tapset: stap's tapset directory is shared with every
# other package's tapsets.
TAPSET_FILES := tapset/pthread-tapset.stp tapset/pthread-tapset-report.stp tapset/pthread-tapset-sources.stp tapset/pthread-tapset-marks.stp \
                tapset/pthread-tapset-origins.stp tapset/pthread-tapset-names.stpm tapset/pthread-tapset-libcs.stpm \
                tapset/pthread-tapset-report.stpm
TAPSET_RUNTIME_FILES := bpf/pthread-tapset-runtime.stp linux/pthread-tapset-runtime.stp bpf/pthread-tapset-target.stpm
# the macros derived from this host's libc (tools/update-tapset): links in
# the tapset directory to the files in $(statedir)/tapset
TAPSET_HOST_FILES := pthread-tapset-lib.stpm bpf/pthread-tapset-args.stpm linux/pthread-tapset-args.stpm

# both runtimes: BPF natively; the kernel-module runtime natively where
# this kernel loads modules, else in a qemu VM (lkm-vm/, set up by check)
RUNTIME    ?= bpf lkm
SOURCES    ?= $(shell tools/sources)

FIXTURES   := self-relock abba cycle-3 cycle-5 cycle-8 recursive-relock \
              errorcheck-relock trylock-fail contention mutex-calls \
              many-waiters quick-exit crash-segv crash-abort steady static \
              hung-mix rwlock-cycle condvar-waiters rwlock-calls cond-calls thread-calls \
              lock-waits lock-holds lock-waits-fp lock-holds-fp lock-orders lock-orders-benign lock-orders-across-cpus lock-classes lock-churn lock-remade lock-handoffs deep-calls deep-calls-fp \
              in-container hostile hostile-hang
FIXTURE_BINS := $(addprefix $(BUILD)/fixtures/,$(FIXTURES))
# built with musl-gcc (musl-tools) and g++, for the tests only
TEST_FIXTURE_BINS := $(BUILD)/fixtures/musl-quick-exit $(BUILD)/fixtures/cxx-locks $(BUILD)/fixtures/cxx-deadlock \
                     $(BUILD)/fixtures/libprobe-points.so
LAUNCHER_BINS := $(BUILD)/launcher/start-gate $(BUILD)/launcher/end-with-target $(BUILD)/launcher/who \
                 $(BUILD)/launcher/lockorder-cycles $(BUILD)/launcher/whole-lines $(BUILD)/launcher/bind-from \
                 $(BUILD)/launcher/safe-text $(BUILD)/launcher/pprof
# preloaded into stapbpf: a session's probes on one instruction share its uprobe
LAUNCHER_LIBS := $(BUILD)/launcher/libshare-uprobes.so

# Debian packages: to build and run (make deps), to test and lint (make test-deps)
DEB_PACKAGES  := systemtap systemtap-sdt-dev gcc make libc6-dev binutils protobuf-c-compiler libprotobuf-c-dev zlib1g-dev
TEST_PACKAGES := dejagnu expect python3 cppcheck shellcheck musl-tools g++ man-db dpkg-dev debhelper lintian rpm \
                 prometheus prometheus-node-exporter libxml2-utils chromium poppler-utils golang-go
# the benchmark's references (Valgrind's Helgrind and DRD, bpftrace), its
# real program (pigz), and bpftool (the BPF maps' memory)
BENCH_PACKAGES := valgrind pigz bpftrace bpftool

.PHONY: all product deps test-deps demo pictures check installcheck bench install uninstall lint \
        clean glibc-marks man test-fixtures deb rpm dist print-%

all: tapset/pthread-tapset-marks.stp doc/marks.md $(BUILD)/libpthread-marks.so $(LAUNCHER_BINS) $(LAUNCHER_LIBS) $(FIXTURE_BINS) $(BUILD)/bench/workloads $(BUILD)/bench/workloads-fp $(BUILD)/bench/timed $(BUILD)/bench/bpf-handler-ns man

# what make install installs (no fixtures, no benchmark)
product: tapset/pthread-tapset-marks.stp doc/marks.md $(BUILD)/libpthread-marks.so $(LAUNCHER_BINS) $(LAUNCHER_LIBS) $(BUILD)/host/libmemlock-shim.so man

# one page per documented probe and function, from tapset/pthread-tapset.stp and
# tapset/pthread-tapset-report.stp
man: $(BUILD)/man/.stamp
$(BUILD)/man/.stamp: tapset/pthread-tapset.stp tapset/pthread-tapset-report.stp tapset/pthread-tapset-origins.stp tools/tapset-man
	rm -rf $(BUILD)/man && tools/tapset-man tapset/pthread-tapset.stp $(BUILD)/man && \
	  tools/tapset-man tapset/pthread-tapset-report.stp $(BUILD)/man && \
	  tools/tapset-man tapset/pthread-tapset-origins.stp $(BUILD)/man && touch $@

# (built into a temporary name and renamed: pthread-stap builds these on
# demand, and two sessions may start at once)
$(BUILD)/libpthread-marks.so: preload/pthread-marks.c $(BUILD)/include/pthread-marks.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) $(WARN) -I$(BUILD)/include -fPIC -shared -o $@.tmp.$$$$ $< -ldl && mv $@.tmp.$$$$ $@

# tapset/marks.list is the one list of marks: the rest is derived from it
# (tools/marks-gen).  The generated tapset file and doc are kept in the tree,
# so that the tapset reads without a build; `make lint` checks they are current.
$(BUILD)/include/pthread-marks.h: tapset/marks.list tools/marks-gen
	@mkdir -p $(@D)
	tools/marks-gen header > $@.tmp.$$$$ && mv $@.tmp.$$$$ $@
tapset/pthread-tapset-marks.stp: tapset/marks.list tools/marks-gen
	tools/marks-gen tapset > $@.tmp && mv $@.tmp $@
doc/marks.md: tapset/marks.list tools/marks-gen
	tools/marks-gen doc > $@.tmp && mv $@.tmp $@

$(BUILD)/host/libmemlock-shim.so: host/memlock-shim.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) $(WARN) -shared -fPIC -o $@.tmp.$$$$ $< -ldl && mv $@.tmp.$$$$ $@

$(BUILD)/launcher/libshare-uprobes.so: launcher/share-uprobes.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) $(WARN) -shared -fPIC -o $@.tmp.$$$$ $< -ldl && mv $@.tmp.$$$$ $@

# the pprof writer: protobuf-c's encoder, made by protoc-c from the
# project's schema of the format (launcher/profile.proto), and zlib
$(BUILD)/launcher/profile.pb-c.c: launcher/profile.proto
	@mkdir -p $(@D)
	protoc-c --proto_path=launcher --c_out=$(@D) launcher/profile.proto
$(BUILD)/launcher/pprof: launcher/pprof.c $(BUILD)/launcher/profile.pb-c.c
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) $(WARN) -I$(BUILD)/launcher -o $@.tmp.$$$$ $< $(BUILD)/launcher/profile.pb-c.c \
	    -lprotobuf-c -lz && mv $@.tmp.$$$$ $@

$(BUILD)/launcher/%: launcher/%.c launcher/proc.h launcher/mappings.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) $(WARN) -o $@.tmp.$$$$ $< && mv $@.tmp.$$$$ $@

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

$(BUILD)/fixtures/lock-orders $(BUILD)/fixtures/lock-orders-benign $(BUILD)/fixtures/lock-orders-across-cpus $(BUILD)/fixtures/lock-churn $(BUILD)/fixtures/lock-remade: c-fixtures/lock-orders.h
$(BUILD)/fixtures/in-container: launcher/proc.h

# its locks and locking function renamed to names a hostile program would
# choose (c-fixtures/hostile.c lists them): control characters, a quote, a
# backslash, bytes that are not UTF-8
$(BUILD)/fixtures/hostile $(BUILD)/fixtures/hostile-hang: c-fixtures/hostile.c c-fixtures/fixture.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(WARN) $(if $(findstring hang,$(@F)),-DHOSTILE_HANG) -pthread -c -o $@.o $<
	objcopy --redefine-sym "hostile_esc=$$(printf 'evil\033[2J\033[31mRED\033[0m')" \
	    --redefine-sym 'hostile_quote=quote"},"injected":"1' \
	    --redefine-sym 'hostile_backslash=back\slash' \
	    --redefine-sym "hostile_bytes=$$(printf 'bytes\377\376')" \
	    --redefine-sym "hostile_take=$$(printf 'take\033]0;owned\007')" $@.o
	$(CC) $(CFLAGS) -pthread -o $@ $@.o && rm -f $@.o

# the C++ standard library's locks (Debian's g++): one source, two programs
CXX        ?= c++
$(BUILD)/fixtures/cxx-locks: c-fixtures/cxx-locks.cpp c-fixtures/fixture.h
	@mkdir -p $(@D)
	$(CXX) $(CFLAGS) $(WARN) -std=c++17 -pthread -o $@ $<

$(BUILD)/fixtures/cxx-deadlock: c-fixtures/cxx-locks.cpp c-fixtures/fixture.h
	@mkdir -p $(@D)
	$(CXX) $(CFLAGS) $(WARN) -std=c++17 -DCXX_DEADLOCK -pthread -o $@ $<

# the same programs with frame pointers (stack N on the BPF runtime walks
# their chain; the plain builds show where it is cut)
$(BUILD)/fixtures/%-fp: c-fixtures/%.c c-fixtures/fixture.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer $(WARN) -pthread -o $@ $<

$(BUILD)/fixtures/%: c-fixtures/%.c c-fixtures/fixture.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(WARN) -pthread -o $@ $<

$(BUILD)/bench/workloads-fp: bench/workloads.c
	@mkdir -p $(@D)
	$(CC) -O2 -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer $(WARN) -pthread -o $@ $<

$(BUILD)/bench/%: bench/%.c
	@mkdir -p $(@D)
	$(CC) -O2 $(WARN) -pthread -o $@ $<

# read by tools/pthread-marks-stpm, never run; stripped (-s: its .dynsym
# alone) as a distribution's libc is, so that stap would name its
# functions from the symbol file the tool writes, not from its own .symtab
$(BUILD)/fixtures/libprobe-points.so: c-fixtures/probe-points.S c-fixtures/probe-points.map
	@mkdir -p $(@D)
	$(CC) -shared -nostdlib -s $(WARN) -Wl,--version-script=c-fixtures/probe-points.map -o $@ $<

test-fixtures: $(TEST_FIXTURE_BINS)

deps:
	@tools/install-deps $(DEB_PACKAGES)

test-deps:
	@tools/install-deps $(DEB_PACKAGES) $(TEST_PACKAGES)

glibc-marks:
	@tools/fetch-glibc-with-marks $(GLIBC_MARKS)

demo: deps all
	@tools/demo

# the pictures in the README and doc/ (a flame graph of a fixture's holds)
pictures: deps all
	@tools/make-pictures

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
	for f in lkm-vm/*.c; do $(CC) $(WARN) -fsyntax-only $$f || exit 1; done
	for f in bench/*.c; do $(CC) $(WARN) -fsyntax-only -pthread $$f || exit 1; done
	for f in launcher/*.c; do $(CC) $(WARN) -I$(BUILD)/launcher -fPIC -fsyntax-only $$f || exit 1; done
	for f in c-fixtures/*.c; do $(CC) $(WARN) -DTHREADS=3 -fsyntax-only -pthread $$f || exit 1; done
	for f in c-fixtures/*.cpp; do $(CXX) $(WARN) -std=c++17 -fsyntax-only -pthread $$f || exit 1; done
	cppcheck --quiet --error-exitcode=1 --enable=warning,portability,performance \
	    --suppress=missingIncludeSystem -DTHREADS=3 -I$(BUILD)/include preload host launcher c-fixtures bench lkm-vm
	tools/lint

# The whole product, usable from any directory with no checkout and no
# compiler: pthread-stap and its helpers, the tapset (in stap's own tapset
# directory, so plain stap finds it), the scripts, the preload library and
# every man page.  The tapset's host macros are derived by update-tapset on
# the machine it runs on: here, when installing into the real system; a
# package (DESTDIR set) runs it from its postinst / %post instead.
LIBEXEC_PROGRAMS := $(LAUNCHER_BINS) launcher/symbolize launcher/profile launcher/flamegraph launcher/unprivileged launcher/export tools/marks-source tools/marks-gen \
                    tools/can-load-modules tools/stap-tapset-dir
# the tools that read the layout file (its path written into their LAYOUT=)
LAYOUT_PROGRAMS := host/prepare-bpf tools/pthread-marks-stpm tools/update-tapset
pkgdatadir := $(datadir)/pthread-tapset
install: product
	install -d $(DESTDIR)$(bindir) $(DESTDIR)$(tapsetdir)/bpf $(DESTDIR)$(tapsetdir)/linux $(DESTDIR)$(scriptdir) \
	    $(DESTDIR)$(pkglibdir) $(DESTDIR)$(pkglibexecdir) $(DESTDIR)$(mandir)/man8 $(DESTDIR)$(mandir)/man3 \
	    $(DESTDIR)$(systemdunitdir)
	install -m 644 $(TAPSET_FILES) $(DESTDIR)$(tapsetdir)/
	for f in $(TAPSET_RUNTIME_FILES); do install -m 644 tapset/$$f $(DESTDIR)$(tapsetdir)/$$f || exit 1; done
	for f in $(TAPSET_HOST_FILES); do ln -sfn $(statedir)/tapset/$$f $(DESTDIR)$(tapsetdir)/$$f || exit 1; done
	install -m 755 $(LIBEXEC_PROGRAMS) $(DESTDIR)$(pkglibexecdir)/
	for f in pthread-stap $(LAYOUT_PROGRAMS); do \
	    case $$f in pthread-stap) to=$(DESTDIR)$(bindir) ;; *) to=$(DESTDIR)$(pkglibexecdir) ;; esac; \
	    sed 's|^LAYOUT=$$|LAYOUT=$(pkgdatadir)/layout|' $$f > $$to/$$(basename $$f) && chmod 755 $$to/$$(basename $$f) || exit 1; \
	done
	install -m 644 tapset/marks.list $(DESTDIR)$(pkgdatadir)/
	printf '%s\n' "VERSION=$(VERSION)" "HELPERS=$(pkglibexecdir)" "SYMBOLIZE=$(pkglibexecdir)/symbolize" \
	    "TOOLS=$(pkglibexecdir)" "PREPARE_BPF=$(pkglibexecdir)/prepare-bpf" "SCRIPTS=$(scriptdir)" \
	    "STATE=$(statedir)" "PRELOAD_DEFAULT=$(pkglibdir)/libpthread-marks.so" \
	    "MARKS_LIST=$(pkgdatadir)/marks.list" "SHIM=$(pkglibdir)/libmemlock-shim.so" \
	    "SHARE_UPROBES=$(pkglibdir)/libshare-uprobes.so" > $(DESTDIR)$(pkgdatadir)/layout
	chmod 644 $(DESTDIR)$(pkgdatadir)/layout
	install -m 644 $(BUILD)/libpthread-marks.so $(BUILD)/host/libmemlock-shim.so $(LAUNCHER_LIBS) $(DESTDIR)$(pkglibdir)/
	install -m 755 scripts/*.stp $(DESTDIR)$(scriptdir)/
	install -m 644 scripts/*.meta scripts/*_example.txt $(DESTDIR)$(scriptdir)/
	install -m 644 man/*.8 $(DESTDIR)$(mandir)/man8/
	sed 's|@BINDIR@|$(bindir)|' systemd/pthread-tapset-export.service.in > $(DESTDIR)$(systemdunitdir)/pthread-tapset-export.service
	chmod 644 $(DESTDIR)$(systemdunitdir)/pthread-tapset-export.service
	install -m 644 $(BUILD)/man/*.3stap $(DESTDIR)$(mandir)/man3/
	@if [ -z "$(DESTDIR)" ]; then $(pkglibexecdir)/update-tapset; \
	 else echo "install: staged in $(DESTDIR); on the target, run $(pkglibexecdir)/update-tapset (the packages do)"; fi

uninstall:
	rm -f $(addprefix $(DESTDIR)$(tapsetdir)/,$(notdir $(TAPSET_FILES)) $(TAPSET_RUNTIME_FILES) $(TAPSET_HOST_FILES))
	rm -rf $(DESTDIR)$(pkgdatadir) $(DESTDIR)$(pkglibdir) $(DESTDIR)$(pkglibexecdir) $(DESTDIR)$(statedir)
	rm -f $(DESTDIR)$(bindir)/pthread-stap $(DESTDIR)$(systemdunitdir)/pthread-tapset-export.service
	rmdir $(DESTDIR)$(systemdunitdir) $(DESTDIR)$(dir $(systemdunitdir)) 2>/dev/null || :
	rm -f $(addprefix $(DESTDIR)$(mandir)/man8/,$(notdir $(wildcard man/*.8)))
	rm -f $(DESTDIR)$(mandir)/man3/probe::pthread.*.3stap $(DESTDIR)$(mandir)/man3/function::pthread_*.3stap

# packages: the Debian one (lands beside this directory, as
# dpkg-buildpackage puts it), the RPM (in build/rpm), and the source tarball
deb:
	@tools/install-deps debhelper fakeroot dpkg-dev
	dpkg-buildpackage -us -uc -b

rpm: dist
	@tools/install-deps rpm
	rm -rf $(BUILD)/rpm && mkdir -p $(BUILD)/rpm/SOURCES
	cp $(BUILD)/pthread-tapset-$(VERSION).tar.gz $(BUILD)/rpm/SOURCES/
	rpmbuild -bb --nodeps --define "_topdir $(abspath $(BUILD)/rpm)" pthread-tapset.spec

# the source tarball of the commit checked out (git archive: the same bytes
# each time it is made from the same commit)
dist:
	@mkdir -p $(BUILD)
	git archive --format=tar --prefix=pthread-tapset-$(VERSION)/ HEAD | gzip -n -9 > $(BUILD)/pthread-tapset-$(VERSION).tar.gz.tmp
	mv $(BUILD)/pthread-tapset-$(VERSION).tar.gz.tmp $(BUILD)/pthread-tapset-$(VERSION).tar.gz
	@echo "dist: $(BUILD)/pthread-tapset-$(VERSION).tar.gz"

# make print-VAR: a variable's value (for the test scripts)
print-%:
	@echo '$($*)'

clean:
	lkm-vm/stop
	rm -rf $(BUILD)/man $(BUILD)/include $(BUILD)/fixtures $(BUILD)/libpthread-marks.so $(BUILD)/marks \
	       $(BUILD)/test-* $(BUILD)/bench $(BUILD)/host $(BUILD)/launcher $(BUILD)/run $(BUILD)/lint
