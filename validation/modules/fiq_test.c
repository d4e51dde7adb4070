// SPDX-License-Identifier: GPL-2.0
/*
 * Faults and benchmarks for the FIQ debugger tests, triggered from debugfs
 * (/sys/kernel/debug/fiq_test/):
 *
 *   echo 1 > deadlock
 *	a driver bug: spin_lock_irq() taken twice on the same lock, so the CPU
 *	spins forever with IRQs masked.
 *
 *   echo <cpu> > irq_storm
 *	an interrupt storm on <cpu>: a level interrupt that nothing clears.
 *	GIC: an SPI no device drives (storm_spi=, default 47: free on the
 *	vexpress motherboard, A9 and A15 tiles), made pending by software
 *	(irq_set_irqchip_state(), i.e. GICD_ISPENDR).  VIC: source 1, the
 *	Versatile's software interrupt line, raised through VICSoftInt.
 *	Both are software latches that the interrupt's acknowledgement drops
 *	(GIC: reading GICC_IAR; VIC: irq-vic.c's ack writes VICSoftIntClear),
 *	so the handler raises the line again before returning: from the
 *	CPU's point of view a level interrupt that nothing clears.  The
 *	handler polls a status register for 1 ms per interrupt (a slow
 *	device's handler), so a sample of the stuck CPU most likely lands
 *	in it.
 *
 *   echo <cpu> > irq_oops
 *	the same interrupt, once, with a handler that dereferences NULL: an
 *	oops in hard IRQ context on <cpu>.
 *
 *   echo <n> > ipi_bench; cat ipi_bench
 *	the cost of the normal IRQ path: n irq_work items queued one after
 *	the other on this CPU, each raised by a self-IPI (IPI_IRQ_WORK, an SGI
 *	through the GIC) and waited for.  Reads back "<n> <ns>": the guest
 *	time (ktime_get) the n round trips took.  Under QEMU -icount this is
 *	an instruction count.
 *
 *   echo <n> > call_ipis
 *	n function call IPIs from this CPU to another one, one after the
 *	other, each waited for (smp_call_function_single()): IPIs that the
 *	GIC sends to another CPU, for a test that wants them in flight when
 *	an NMI comes.  -ENODEV with one CPU online.
 *
 *   echo <n> > spi_bench; cat spi_bench
 *	the same for a device interrupt: the SPI of irq_storm (GIC) or the
 *	VIC's software interrupt, made pending n times one after the other
 *	and waited for each time (gic_handle_irq, handle_fasteoi_irq, the
 *	handler, EOI).  Same read-back.
 *
 *   echo <ms> > fiq_at_entry
 *	a FIQ taken on the first instruction of ktime_get(): IRQs and FIQs
 *	are masked for <ms> milliseconds (a knock sent meanwhile stays
 *	pending), then ktime_get() is entered by an exception return that
 *	unmasks FIQ in the same step, so the pending FIQ is taken before
 *	ktime_get()'s first instruction runs.  A stuck CPU can be sampled
 *	there at any time; the backtrace must still reach the caller,
 *	fiq_test_call_at_entry().
 *
 *   echo <ms> > busy_wait
 *	a driver polling a device with IRQs masked: mdelay(<ms>) between
 *	local_irq_save() and local_irq_restore(), in fiq_test_busy_wait().
 *	Where no timer provides udelay() (versatile, vexpress-a9) the CPU
 *	spins in arch/arm/lib/delay-loop.S.
 *
 *   echo <ms> > pmu_overflow; cat pmu_overflow
 *	the PMU's overflow interrupts in <ms> ms of cycle counting.
 *
 *   echo 1 > insn_count; ...; echo 0 > insn_count; cat insn_count
 *	instructions executed on all CPUs in between (QEMU: -icount, Non-secure).
 *
 *   echo <ms> > spsr_hold
 *	a known value in spsr_svc for <ms> ms, FIQs unmasked (see there).
 *
 *   echo <bpr> > bpr_reinit
 *	firmware that leaves GICC_BPR at <bpr> on a CPU PM exit (see there).
 *
 *   cat gic_regs
 *	what the GIC holds (group, enable, priority, target, config of every
 *	interrupt; the CPU interfaces' CTLR, PMR, BPR), per CPU where banked:
 *	the FIQ-off kernel must leave it as mainline does.
 */
#include <linux/atomic.h>
#include <linux/cpu.h>
#include <linux/cpu_pm.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/interrupt.h>
#include <linux/io.h>
#include <linux/irq.h>
#include <linux/irq_work.h>
#include <linux/irqdomain.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/of.h>
#include <linux/of_address.h>
#include <linux/perf_event.h>
#include <linux/seq_file.h>
#include <linux/spinlock.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>

static DEFINE_SPINLOCK(fiq_test_lock);
static struct dentry *fiq_test_dir;

static unsigned int storm_spi = 47;
module_param(storm_spi, uint, 0444);
MODULE_PARM_DESC(storm_spi, "GIC SPI used for irq_storm/irq_oops (no device may drive it)");

#define VIC_RAW_STATUS		0x08
#define VIC_SOFT_INT		0x18
#define VIC_SOURCE_SOFTINT	1

static void __iomem *vic_base;
static int fault_irq;
static atomic_t storm_count;
/* not static const: the compiler must not see that it is NULL */
int *fiq_test_null_ptr;

static noinline void fiq_test_self_deadlock(void)
{
	pr_info("fiq_test: taking fiq_test_lock twice with IRQs masked\n");
	spin_lock_irq(&fiq_test_lock);
#ifdef CONFIG_SMP
	spin_lock_irq(&fiq_test_lock);
#else
	/* UP spinlocks do not spin: wait for the lock the way SMP would */
	for (;;)
		cpu_relax();
#endif
	spin_unlock_irq(&fiq_test_lock);
}

static ssize_t deadlock_write(struct file *f, const char __user *buf,
			      size_t len, loff_t *off)
{
	fiq_test_self_deadlock();
	return len;
}

static const struct file_operations deadlock_fops = {
	.write = deadlock_write,
};

/*
 * Call fn with IRQs masked, FIQ unmasked by the branch itself: "ldm {pc}^"
 * in SVC mode copies SPSR to CPSR as it jumps, and a pending FIQ is taken
 * before the target's first instruction.  SPSR_svc is free here: the
 * syscall entry saved the user's CPSR in pt_regs.
 */
static noinline void fiq_test_call_at_entry(void (*fn)(void))
{
	register unsigned long target asm("r4") = (unsigned long)fn;

	asm volatile(
	"	mrs	r0, cpsr\n"
	"	bic	r0, r0, %[f]\n"
	"	msr	spsr_cxsf, r0\n"
	"	adr	lr, 1f\n"
	"	str	%[fn], [sp, #-4]!\n"
	"	ldmia	sp!, {pc}^\n"
	"1:\n"
	: [fn] "+r" (target)
	: [f] "I" (PSR_F_BIT)
	: "r0", "r1", "r2", "r3", "ip", "lr", "memory", "cc");
}

static ssize_t fiq_at_entry_write(struct file *f, const char __user *buf,
				  size_t len, loff_t *off)
{
	unsigned long flags;
	unsigned int ms;
	int ret;

	ret = kstrtouint_from_user(buf, len, 0, &ms);
	if (ret)
		return ret;
	pr_info("fiq_test: FIQ masked for %u ms, then taken at ktime_get+0x0 (%px)\n",
		ms, ktime_get);
	local_irq_save(flags);
	local_fiq_disable();
	mdelay(ms);
	fiq_test_call_at_entry((void (*)(void))ktime_get);
	local_irq_restore(flags);
	return len;
}

static const struct file_operations fiq_at_entry_fops = {
	.write = fiq_at_entry_write,
};

static noinline void fiq_test_busy_wait(unsigned int ms)
{
	unsigned long flags;

	local_irq_save(flags);
	mdelay(ms);
	local_irq_restore(flags);
}

static ssize_t busy_wait_write(struct file *f, const char __user *buf,
			       size_t len, loff_t *off)
{
	unsigned int ms;
	int ret;

	ret = kstrtouint_from_user(buf, len, 0, &ms);
	if (ret)
		return ret;
	pr_info("fiq_test: busy-waiting %u ms with IRQs masked\n", ms);
	fiq_test_busy_wait(ms);
	return len;
}

static const struct file_operations busy_wait_fops = {
	.write = busy_wait_write,
};

/* --- a software-raised level interrupt: storm and oops ------------------ */

static const struct of_device_id fiq_test_gic_ids[] = {
	{ .compatible = "arm,cortex-a15-gic" },
	{ .compatible = "arm,cortex-a9-gic" },
	{ .compatible = "arm,cortex-a7-gic" },
	{ .compatible = "arm,gic-400" },
	{ }
};

static int fiq_test_map_irq(void)
{
	struct irq_fwspec fw = { };
	struct device_node *np;
	int irq;

	np = of_find_compatible_node(NULL, NULL, "arm,versatile-vic");
	if (np) {
		vic_base = of_iomap(np, 0);
		if (!vic_base) {
			of_node_put(np);
			return -ENOMEM;
		}
		fw.param_count = 1;
		fw.param[0] = VIC_SOURCE_SOFTINT;
	} else {
		np = of_find_matching_node(NULL, fiq_test_gic_ids);
		if (!np)
			return -ENODEV;
		fw.param_count = 3;
		fw.param[0] = 0;		/* GIC_SPI */
		fw.param[1] = storm_spi;
		fw.param[2] = IRQ_TYPE_LEVEL_HIGH;
	}
	fw.fwnode = of_node_to_fwnode(np);
	irq = irq_create_fwspec_mapping(&fw);
	of_node_put(np);
	return irq ? irq : -EINVAL;
}

/* make the line pending; the storm handler calls it again (see above) */
static void fiq_test_raise(void)
{
	if (vic_base)
		writel(BIT(VIC_SOURCE_SOFTINT), vic_base + VIC_SOFT_INT);
	else
		irq_set_irqchip_state(fault_irq, IRQCHIP_STATE_PENDING, true);
}

static void fiq_test_poll_status(void)
{
	bool active;

	if (vic_base)
		readl_relaxed(vic_base + VIC_RAW_STATUS);
	else
		irq_get_irqchip_state(fault_irq, IRQCHIP_STATE_ACTIVE, &active);
}

static noinline irqreturn_t fiq_test_storm_irq(int irq, void *dev)
{
	u64 end = ktime_get_ns() + NSEC_PER_MSEC;

	if (atomic_inc_return(&storm_count) == 1)
		pr_info("fiq_test: IRQ storm on CPU%d\n", smp_processor_id());
	/*
	 * A slow device: its handler polls a status register (the line's
	 * state in the interrupt controller) for 1 ms.  Under QEMU the
	 * knock's FIQ mostly comes in right after an I/O access of the vCPU
	 * (a register or the clock): most of those must be in this handler.
	 */
	while (ktime_get_ns() < end)
		fiq_test_poll_status();
	fiq_test_raise();
	return IRQ_HANDLED;
}

/* map the software-raised line and request it: fault_irq while it is held */
static int fiq_test_request_irq(irq_handler_t handler, const char *name)
{
	int ret;

	if (fault_irq)
		return -EBUSY;
	ret = fiq_test_map_irq();
	if (ret < 0)
		return ret;
	fault_irq = ret;
	ret = request_irq(fault_irq, handler, 0, name, NULL);
	if (ret)
		fault_irq = 0;
	return ret;
}

static noinline irqreturn_t fiq_test_oops_irq(int irq, void *dev)
{
	pr_info("fiq_test: oops in the IRQ handler on CPU%d\n", smp_processor_id());
	*fiq_test_null_ptr = 1;
	return IRQ_HANDLED;
}

static ssize_t fault_irq_write(const char __user *buf, size_t len,
			       irq_handler_t handler, const char *name)
{
	unsigned int cpu;
	int ret;

	ret = kstrtouint_from_user(buf, len, 0, &cpu);
	if (ret)
		return ret;
	if (cpu >= nr_cpu_ids || !cpu_online(cpu))
		return -EINVAL;
	ret = fiq_test_request_irq(handler, name);
	if (ret)
		return ret;
	if (num_possible_cpus() > 1) {
		ret = irq_set_affinity(fault_irq, cpumask_of(cpu));
		if (ret)
			return ret;
	}
	pr_info("fiq_test: raising IRQ%d (%s) for CPU%u\n", fault_irq, name, cpu);
	fiq_test_raise();
	return len;
}

static ssize_t irq_storm_write(struct file *f, const char __user *buf,
			       size_t len, loff_t *off)
{
	return fault_irq_write(buf, len, fiq_test_storm_irq, "fiq_test_storm");
}

static ssize_t irq_oops_write(struct file *f, const char __user *buf,
			      size_t len, loff_t *off)
{
	return fault_irq_write(buf, len, fiq_test_oops_irq, "fiq_test_oops");
}

static const struct file_operations irq_storm_fops = {
	.write = irq_storm_write,
};

static const struct file_operations irq_oops_fops = {
	.write = irq_oops_write,
};

/* --- the normal IRQ path's cost: self-IPIs and a device interrupt ------- */

static atomic_t bench_done;
static unsigned int bench_n;
static u64 bench_ns;

static void fiq_test_bench_work(struct irq_work *w)
{
	atomic_inc(&bench_done);
}

static struct irq_work bench_work = IRQ_WORK_INIT_HARD(fiq_test_bench_work);

static void fiq_test_bench_raise_ipi(void)
{
	irq_work_queue(&bench_work);
}

static irqreturn_t fiq_test_bench_irq(int irq, void *dev)
{
	atomic_inc(&bench_done);
	return IRQ_HANDLED;
}

/*
 * n round trips, one after the other on this CPU: raise, then wait for the
 * handler.  An item that takes 100 ms means the interrupt never came.
 */
static int fiq_test_bench(unsigned int n, void (*raise)(void))
{
	unsigned int i;
	int ret = 0;
	u64 t0;

	preempt_disable();
	atomic_set(&bench_done, 0);
	t0 = ktime_get_ns();
	for (i = 0; i < n && ret == 0; i++) {
		u64 limit = ktime_get_ns() + 100 * NSEC_PER_MSEC;

		raise();
		while (atomic_read(&bench_done) <= i) {
			if (ktime_get_ns() > limit) {
				ret = -ETIMEDOUT;
				break;
			}
			cpu_relax();
		}
	}
	bench_ns = ktime_get_ns() - t0;
	bench_n = ret ? 0 : n;
	preempt_enable();
	return ret;
}

static ssize_t ipi_bench_write(struct file *f, const char __user *buf,
			       size_t len, loff_t *off)
{
	unsigned int n;
	int ret;

	ret = kstrtouint_from_user(buf, len, 0, &n);
	if (ret)
		return ret;
	/*
	 * ARM raises irq_work by IPI only when is_smp() (MPIDR says the CPU
	 * is in a multiprocessor; not exported): otherwise the work waits for
	 * the next tick.
	 */
	if (!IS_ENABLED(CONFIG_SMP))
		return -EOPNOTSUPP;
	ret = fiq_test_bench(n, fiq_test_bench_raise_ipi);
	irq_work_sync(&bench_work);
	return ret ? ret : len;
}

static ssize_t spi_bench_write(struct file *f, const char __user *buf,
			       size_t len, loff_t *off)
{
	unsigned int n;
	int ret;

	ret = kstrtouint_from_user(buf, len, 0, &n);
	if (ret)
		return ret;
	ret = fiq_test_request_irq(fiq_test_bench_irq, "fiq_test_bench");
	if (ret)
		return ret;
	ret = fiq_test_bench(n, fiq_test_raise);
	free_irq(fault_irq, NULL);
	fault_irq = 0;
	return ret ? ret : len;
}

static ssize_t bench_read(struct file *f, char __user *buf, size_t len,
			  loff_t *off)
{
	char out[48];
	int n;

	n = scnprintf(out, sizeof(out), "%u %llu\n", bench_n, bench_ns);
	return simple_read_from_buffer(buf, len, off, out, n);
}

static void fiq_test_call_noop(void *info)
{
}

static ssize_t call_ipis_write(struct file *f, const char __user *buf,
			       size_t len, loff_t *off)
{
	unsigned int n, i;
	int ret, cpu;

	ret = kstrtouint_from_user(buf, len, 0, &n);
	if (ret)
		return ret;
	for (i = 0; i < n; i++) {
		cpu = cpumask_any_but(cpu_online_mask, get_cpu());
		put_cpu();
		if (cpu >= nr_cpu_ids)
			return -ENODEV;
		ret = smp_call_function_single(cpu, fiq_test_call_noop, NULL, 1);
		if (ret)
			return ret;
	}
	return len;
}

static const struct file_operations call_ipis_fops = {
	.write = call_ipis_write,
};

static const struct file_operations ipi_bench_fops = {
	.write = ipi_bench_write,
	.read = bench_read,
};

static const struct file_operations spi_bench_fops = {
	.write = spi_bench_write,
	.read = bench_read,
};

/* --- PMU overflow interrupts: is arm_pmu's interrupt alive? ------------- */

#ifdef CONFIG_PERF_EVENTS

static atomic_t pmu_overflows;

static void fiq_test_pmu_overflow(struct perf_event *event,
				  struct perf_sample_data *data,
				  struct pt_regs *regs)
{
	atomic_inc(&pmu_overflows);
}

/*
 * echo <ms> > pmu_overflow: count CPU cycles on every online CPU for <ms>
 * ms with a short sample period, each overflow an interrupt of the PMU.
 * cat pmu_overflow: the overflows taken so far.
 */
static ssize_t pmu_overflow_write(struct file *f, const char __user *buf,
				  size_t len, loff_t *off)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_HARDWARE,
		.config = PERF_COUNT_HW_CPU_CYCLES,
		.size = sizeof(attr),
		.sample_period = 100000,
		.pinned = 1,
	};
	static struct perf_event *ev[NR_CPUS];
	unsigned int ms, cpu;
	int ret;

	ret = kstrtouint_from_user(buf, len, 0, &ms);
	if (ret)
		return ret;
	for_each_online_cpu(cpu) {
		ev[cpu] = perf_event_create_kernel_counter(&attr, cpu, NULL,
							   fiq_test_pmu_overflow, NULL);
		if (IS_ERR(ev[cpu])) {
			ret = PTR_ERR(ev[cpu]);
			ev[cpu] = NULL;
		}
	}
	if (!ret)
		msleep(ms);
	for_each_online_cpu(cpu)
		if (ev[cpu])
			perf_event_release_kernel(ev[cpu]);
	return ret ? ret : len;
}

static ssize_t pmu_overflow_read(struct file *f, char __user *buf, size_t len,
				 loff_t *off)
{
	char s[16];

	return simple_read_from_buffer(buf, len, off, s,
				       scnprintf(s, sizeof(s), "%d\n",
						 atomic_read(&pmu_overflows)));
}

static const struct file_operations pmu_overflow_fops = {
	.write = pmu_overflow_write,
	.read = pmu_overflow_read,
};

static struct perf_event *insn_ev[NR_CPUS];
static u64 insn_total;

/*
 * echo 1 > insn_count: count the instructions every online CPU executes;
 * echo 0 > insn_count: stop.  cat insn_count: the count of the last
 * start..stop.  QEMU's PMU counts instructions only with -icount, and
 * only in Non-secure state on an ARMv7 CPU with EL3 (Secure counting
 * needs SDCR.SPME, which ARMv7 does not have): boot vexpress with
 * secure=off.
 */
static ssize_t insn_count_write(struct file *f, const char __user *buf,
				size_t len, loff_t *off)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_HARDWARE,
		.config = PERF_COUNT_HW_INSTRUCTIONS,
		.size = sizeof(attr),
		.pinned = 1,
	};
	u64 enabled, running;
	unsigned int cpu;
	char c;

	if (!len || get_user(c, buf))
		return -EINVAL;
	for_each_possible_cpu(cpu) {
		if (!insn_ev[cpu])
			continue;
		insn_total += perf_event_read_value(insn_ev[cpu], &enabled, &running);
		perf_event_release_kernel(insn_ev[cpu]);
		insn_ev[cpu] = NULL;
	}
	if (c == '0')
		return len;
	if (c != '1')
		return -EINVAL;
	insn_total = 0;
	for_each_online_cpu(cpu) {
		struct perf_event *ev;

		ev = perf_event_create_kernel_counter(&attr, cpu, NULL, NULL, NULL);
		if (IS_ERR(ev))
			return PTR_ERR(ev);
		insn_ev[cpu] = ev;
	}
	return len;
}

static ssize_t insn_count_read(struct file *f, char __user *buf, size_t len,
			       loff_t *off)
{
	char s[24];

	return simple_read_from_buffer(buf, len, off, s,
				       scnprintf(s, sizeof(s), "%llu\n", insn_total));
}

static const struct file_operations insn_count_fops = {
	.write = insn_count_write,
	.read = insn_count_read,
};
#endif

/* --- the GIC CPU interface's binary point after CPU PM ------------------ */

#define GICC_BPR	0x08
static void __iomem *gicc_base;
static unsigned int bpr_value;

/*
 * Firmware that leaves GICC_BPR at bpr_value, then a CPU PM exit, on the
 * CPU it runs on: from a task with IRQs masked, as cpuidle calls CPU PM.
 * Not from an IPI: the GIC driver's CPU PM exit restores the SGIs' and
 * PPIs' active bits it saved on entry, the IPI's own SGI among them, and
 * QEMU's GIC then seems to keep that SGI active after its EOI
 * (FIQ off: the CPU took no interrupt again, its timer stopped).
 */
static long fiq_test_bpr_reinit(void *unused)
{
	local_irq_disable();
	writel_relaxed(bpr_value, gicc_base + GICC_BPR);
	cpu_pm_enter();
	cpu_pm_exit();
	local_irq_enable();
	return 0;
}

/*
 * echo <bpr> > bpr_reinit: write GICC_BPR on every CPU, then put every CPU
 * through cpu_pm_enter()/cpu_pm_exit(), which the GIC driver takes for a
 * CPU interface that lost its state.  gic_regs shows each CPU's GICC_BPR.
 */
static ssize_t bpr_reinit_write(struct file *f, const char __user *buf,
				size_t len, loff_t *off)
{
	struct device_node *np;
	unsigned int cpu;
	int ret;

	ret = kstrtouint_from_user(buf, len, 0, &bpr_value);
	if (ret)
		return ret;
	if (!gicc_base) {
		np = of_find_matching_node(NULL, fiq_test_gic_ids);
		if (!np)
			return -ENODEV;
		gicc_base = of_iomap(np, 1);
		of_node_put(np);
		if (!gicc_base)
			return -ENOMEM;
	}
	cpus_read_lock();
	for_each_online_cpu(cpu)
		work_on_cpu(cpu, fiq_test_bpr_reinit, NULL);
	cpus_read_unlock();
	return len;
}

static const struct file_operations bpr_reinit_fops = {
	.write = bpr_reinit_write,
};

/* --- what the GIC holds: gic_regs (does the series leave it as mainline?) */

/* a register, or an array of them with per interrupts each (per > 0) */
struct fiq_test_gic_reg {
	const char *name;
	u32 off;
	unsigned int per;
};

/* the distributor's per-interrupt arrays; INTIDs 0-31 are banked per CPU */
static const struct fiq_test_gic_reg fiq_test_gicd_arrays[] = {
	{ "GICD_IGROUPR", 0x080, 32 },
	{ "GICD_ISENABLER", 0x100, 32 },
	{ "GICD_IPRIORITYR", 0x400, 4 },
	{ "GICD_ITARGETSR", 0x800, 4 },
	{ "GICD_ICFGR", 0xc00, 16 },
};

/* the CPU interface's (banked) */
static const struct fiq_test_gic_reg fiq_test_gicc_regs[] = {
	{ "GICC_CTLR", 0x00 },
	{ "GICC_PMR", 0x04 },
	{ "GICC_BPR", 0x08 },
};

struct fiq_test_gic_dump {
	struct seq_file *m;
	void __iomem *dist;
	void __iomem *cpu;
};

/* the distributor arrays' registers for INTIDs from..to-1, name<n><where> */
static void fiq_test_gic_show_arrays(struct fiq_test_gic_dump *d, unsigned int from,
				     unsigned int to, const char *where)
{
	const struct fiq_test_gic_reg *r;
	unsigned int i, n;

	for (i = 0; i < ARRAY_SIZE(fiq_test_gicd_arrays); i++) {
		r = &fiq_test_gicd_arrays[i];
		for (n = from / r->per; n < to / r->per; n++)
			seq_printf(d->m, "%s%u%s %#010x\n", r->name, n, where,
				   readl_relaxed(d->dist + r->off + 4 * n));
	}
}

/* run on each CPU (a kworker bound to it): its banked registers */
static long fiq_test_gic_show_banked(void *arg)
{
	struct fiq_test_gic_dump *d = arg;
	const struct fiq_test_gic_reg *r;
	char where[16];
	unsigned int i;

	snprintf(where, sizeof(where), ".cpu%u", smp_processor_id());
	fiq_test_gic_show_arrays(d, 0, 32, where);
	for (i = 0; i < ARRAY_SIZE(fiq_test_gicc_regs); i++) {
		r = &fiq_test_gicc_regs[i];
		seq_printf(d->m, "%s%s %#010x\n", r->name, where, readl_relaxed(d->cpu + r->off));
	}
	return 0;
}

/*
 * cat gic_regs: "name value" lines, read from the GIC of the DT (the
 * distributor and CPU interface, reg 0 and 1): GICD_CTLR, the arrays above
 * for every SPI, then for each online CPU its banked copies, named
 * <name>.cpu<n>.  Read-only: nothing with a side effect (no IAR).
 */
static int gic_regs_show(struct seq_file *m, void *unused)
{
	struct fiq_test_gic_dump d = { .m = m };
	struct device_node *np;
	unsigned int cpu, lines;
	int ret = -ENOMEM;

	np = of_find_matching_node(NULL, fiq_test_gic_ids);
	if (!np)
		return -ENODEV;
	d.dist = of_iomap(np, 0);
	d.cpu = of_iomap(np, 1);
	of_node_put(np);
	if (d.dist && d.cpu) {
		/* GICD_TYPER.ITLinesNumber */
		lines = 32 * ((readl_relaxed(d.dist + 0x004) & 0x1f) + 1);
		seq_printf(m, "GICD_CTLR %#010x\n", readl_relaxed(d.dist));
		fiq_test_gic_show_arrays(&d, 32, lines, "");
		for_each_online_cpu(cpu)
			work_on_cpu_safe(cpu, fiq_test_gic_show_banked, &d);
		ret = 0;
	}
	if (d.cpu)
		iounmap(d.cpu);
	if (d.dist)
		iounmap(d.dist);
	return ret;
}
DEFINE_SHOW_ATTRIBUTE(gic_regs);

/* --- spsr_svc across a FIQ whose handler takes an exception ------------- */

#define SPSR_MARK	0xc00001d3	/* N and Z: no arithmetic sets both */

static noinline u32 fiq_test_hold_spsr(unsigned int ms)
{
	unsigned long flags;
	u32 spsr;

	local_irq_save(flags);
	asm volatile("msr spsr_cxsf, %0" : : "r" (SPSR_MARK));
	mdelay(ms);
	asm volatile("mrs %0, spsr" : "=r" (spsr));
	local_irq_restore(flags);
	return spsr;
}

/*
 * echo <ms> > spsr_hold: hold SPSR_MARK in spsr_svc for <ms> ms with IRQs
 * masked and FIQs not, like the code in the windows where spsr_svc is live;
 * a FIQ taken meanwhile must leave it as it was, whatever its handler did.
 */
static ssize_t spsr_hold_write(struct file *f, const char __user *buf,
			       size_t len, loff_t *off)
{
	unsigned int ms;
	u32 spsr;
	int ret;

	ret = kstrtouint_from_user(buf, len, 0, &ms);
	if (ret)
		return ret;
	pr_info("fiq_test: holding %#x in spsr_svc for %u ms\n", SPSR_MARK, ms);
	spsr = fiq_test_hold_spsr(ms);
	pr_info("fiq_test: spsr_svc %s: %#x\n",
		spsr == SPSR_MARK ? "intact" : "CHANGED", spsr);
	return len;
}

static const struct file_operations spsr_hold_fops = {
	.write = spsr_hold_write,
};

static int __init fiq_test_init(void)
{
	fiq_test_dir = debugfs_create_dir("fiq_test", NULL);
	debugfs_create_file("deadlock", 0200, fiq_test_dir, NULL, &deadlock_fops);
	debugfs_create_file("irq_storm", 0200, fiq_test_dir, NULL, &irq_storm_fops);
	debugfs_create_file("irq_oops", 0200, fiq_test_dir, NULL, &irq_oops_fops);
	debugfs_create_file("ipi_bench", 0600, fiq_test_dir, NULL, &ipi_bench_fops);
	debugfs_create_file("call_ipis", 0200, fiq_test_dir, NULL, &call_ipis_fops);
	debugfs_create_file("spi_bench", 0600, fiq_test_dir, NULL, &spi_bench_fops);
	debugfs_create_file("fiq_at_entry", 0200, fiq_test_dir, NULL, &fiq_at_entry_fops);
	debugfs_create_file("busy_wait", 0200, fiq_test_dir, NULL, &busy_wait_fops);
	debugfs_create_file("gic_regs", 0400, fiq_test_dir, NULL, &gic_regs_fops);
#ifdef CONFIG_PERF_EVENTS
	debugfs_create_file("pmu_overflow", 0600, fiq_test_dir, NULL, &pmu_overflow_fops);
	debugfs_create_file("insn_count", 0600, fiq_test_dir, NULL, &insn_count_fops);
#endif
	debugfs_create_file("bpr_reinit", 0600, fiq_test_dir, NULL, &bpr_reinit_fops);
	debugfs_create_file("spsr_hold", 0200, fiq_test_dir, NULL, &spsr_hold_fops);
	return 0;
}

static void __exit fiq_test_exit(void)
{
	debugfs_remove_recursive(fiq_test_dir);
#ifdef CONFIG_PERF_EVENTS
	{
		unsigned int cpu;

		for_each_possible_cpu(cpu)
			if (insn_ev[cpu])
				perf_event_release_kernel(insn_ev[cpu]);
	}
#endif
	if (fault_irq)
		free_irq(fault_irq, NULL);
	if (vic_base)
		iounmap(vic_base);
	if (gicc_base)
		iounmap(gicc_base);
}

module_init(fiq_test_init);
module_exit(fiq_test_exit);
MODULE_DESCRIPTION("Faults and benchmarks for the ARM FIQ debugger tests");
MODULE_LICENSE("GPL");
