# ARM FIQ debugger: patch series against linux-source-6.1, built and tested in QEMU.
#
#   make demo     boot vexpress-a15, lock a CPU with IRQs masked, enter kdb
#   make check    tree + kernels + initramfs + the whole test suite (what CI runs)
#
# Other targets: deps tree kernel BOARD=... kernels kernel-armv7 kernel-armv5 initramfs
#                pristine (the armv7 kernel without the series)  kexec-initramfs  matrix
#                qemu BOARD=... [SMP=n] [FIQ=1] [APPEND=...] [MACHINE_OPTS=...]
#                own-qemu (the project's qemu-system-arm: the STiH407 model, b2120)
#                export  bisect
#                dtbs-check  figures  cover-letter  clean
SHELL := /bin/bash
BOARD ?= vexpress-a15
SMP ?= 1
PYTEST_ARGS ?=
PY := /usr/bin/python3

FLAVOUR_vexpress-a15 := armv7
FLAVOUR_vexpress-a9 := armv7
FLAVOUR_versatilepb := armv5
FLAVOUR_virt := armv7
FLAVOUR_orangepi-pc := armv7
FLAVOUR_ast2600-evb := armv7
FLAVOUR_sabrelite := armv7
FLAVOUR_b2120 := armv7
FLAVOUR_b2120-stih410 := armv7
# boards that only the project's own QEMU runs
OWN_QEMU_b2120 := own-qemu
OWN_QEMU_b2120-stih410 := own-qemu
FLAVOURS := armv7 armv5

.PHONY: all deps tree kernel kernels initramfs pristine check test matrix demo qemu own-qemu export \
	bisect dtbs-check cover-letter figures clean kexec-initramfs \
	$(addprefix kernel-,$(FLAVOURS)) $(addprefix initramfs-,$(FLAVOURS))

all: kernels initramfs

deps:
	@bash scripts/deps.sh

tree: deps
	@bash scripts/tree.sh

kernels: $(addprefix kernel-,$(FLAVOURS))

# the kernel BOARD boots
kernel: kernel-$(FLAVOUR_$(BOARD))

$(addprefix kernel-,$(FLAVOURS)): kernel-%: tree
	@bash scripts/kernel.sh $*

initramfs: $(addprefix initramfs-,$(FLAVOURS))

$(addprefix initramfs-,$(FLAVOURS)): initramfs-%: kernel-%
	@bash scripts/initramfs.sh $*

# the armv7 kernel and initramfs WITHOUT the series (test_overhead.py's
# baseline): build/out/pristine-armv7
pristine: tree
	@bash scripts/pristine.sh

# the project's qemu-system-arm (build/qemu): Debian's QEMU source with
# validation/qemu/*.patch
own-qemu: deps
	@bash scripts/qemu.sh

test:
	@bash scripts/test.sh $(PYTEST_ARGS)

# the first-stage initramfs of test_kexec.py: kexec-tools and both kernels
kexec-initramfs: kernel-armv7 initramfs-armv7 pristine
	@bash scripts/kexec-initramfs.sh

check: kernels initramfs pristine kexec-initramfs own-qemu
	@bash scripts/test.sh $(PYTEST_ARGS)

# only the fault matrix (also part of check): table at the end, build/matrix.json
matrix: kernels initramfs
	@bash scripts/test.sh $(PYTEST_ARGS) -k test_fault_cell

demo: kernel-$(FLAVOUR_$(BOARD)) initramfs-$(FLAVOUR_$(BOARD)) $(OWN_QEMU_$(BOARD))
	@$(PY) validation/demo.py --board $(BOARD)

qemu: kernel-$(FLAVOUR_$(BOARD)) initramfs-$(FLAVOUR_$(BOARD)) $(OWN_QEMU_$(BOARD))
	@$(PY) validation/run_qemu.py --board $(BOARD) --smp $(SMP) $(if $(filter 1,$(FIQ)),--fiq) --append "$(APPEND)" $(if $(MACHINE_OPTS),--machine-opts "$(MACHINE_OPTS)")

export:
	@bash scripts/export-patches.sh

# dtbs_check of the touched DTBs (armv7 and armv5), pristine vs patched (about 8 min)
dtbs-check: tree
	@bash scripts/dtbs-check.sh

# every patch builds on its own (slow: one incremental build per patch)
bisect: tree
	@bash scripts/bisect-check.sh armv7
	@bash scripts/bisect-check.sh armv5

# the figures of the last test run (build/figures.json)
figures:
	@$(PY) scripts/cover-letter.py

# cover-letter.txt with the series, its diffstat and the last run's figures
# filled in: build/cover-letter.txt (placeholders left are listed)
cover-letter: tree
	@$(PY) scripts/cover-letter.py cover-letter.txt > build/cover-letter.txt
	@echo "cover-letter: build/cover-letter.txt"

clean:
	rm -rf build/out build/logs build/initramfs*
