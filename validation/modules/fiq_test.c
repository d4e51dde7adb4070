// SPDX-License-Identifier: GPL-2.0
/*
 * Faults for the FIQ debugger tests, triggered from debugfs:
 *
 *   echo 1 > /sys/kernel/debug/fiq_test/deadlock
 *	a driver bug: spin_lock_irq() taken twice on the same lock, so the CPU
 *	spins forever with IRQs masked.
 */
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/spinlock.h>

static DEFINE_SPINLOCK(fiq_test_lock);
static struct dentry *fiq_test_dir;

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

static int __init fiq_test_init(void)
{
	fiq_test_dir = debugfs_create_dir("fiq_test", NULL);
	debugfs_create_file("deadlock", 0200, fiq_test_dir, NULL, &deadlock_fops);
	return 0;
}

static void __exit fiq_test_exit(void)
{
	debugfs_remove_recursive(fiq_test_dir);
}

module_init(fiq_test_init);
module_exit(fiq_test_exit);
MODULE_DESCRIPTION("Faults for the ARM FIQ debugger tests");
MODULE_LICENSE("GPL");
