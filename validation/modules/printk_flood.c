// SPDX-License-Identifier: GPL-2.0
/*
 * A boot that keeps printing, for the harness's console handshakes
 * (validation/tests/test_harness.py): with printk_flood.ms=<ms> on the
 * kernel command line (the initramfs' /init hands it to insmod), a kernel
 * thread prints "printk_flood: <n>", eight lines at a time every
 * millisecond or so (every tick without high-resolution timers), for <ms>
 * ms from the module's load, then "printk_flood: done, <n> lines".  The
 * module is loaded at every boot; without the parameter it does nothing.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/sched/task.h>

static unsigned int ms;
module_param(ms, uint, 0444);
MODULE_PARM_DESC(ms, "print 8 lines every millisecond or so for this long (default 0: off)");

static struct task_struct *flood;

static int printk_flood_thread(void *unused)
{
	unsigned long end = jiffies + msecs_to_jiffies(ms);
	unsigned int n = 0;

	while (time_before(jiffies, end) && !kthread_should_stop()) {
		pr_info("%u\n", n++);
		if (n % 8 == 0)
			usleep_range(1000, 1500);
	}
	pr_info("done, %u lines\n", n);
	return 0;
}

static int __init printk_flood_init(void)
{
	if (!ms)
		return 0;
	flood = kthread_run(printk_flood_thread, NULL, "printk_flood");
	if (IS_ERR(flood))
		return PTR_ERR(flood);
	/* it may end before the module does: keep it for kthread_stop() */
	get_task_struct(flood);
	return 0;
}

static void __exit printk_flood_exit(void)
{
	if (flood) {
		kthread_stop(flood);
		put_task_struct(flood);
	}
}

module_init(printk_flood_init);
module_exit(printk_flood_exit);
MODULE_DESCRIPTION("Kernel messages on the console for a while after loading");
MODULE_LICENSE("GPL");
