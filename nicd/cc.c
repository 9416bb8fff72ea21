/* nicd/cc.c — congestion control of a QP group (PROTOCOL.md §5).
 *
 * The engine calls these hooks on each SACK, loss and trim NACK; the
 * window itself gates fetches in tx.c.  CongestionControl=None keeps cwnd
 * at MaxCongestionWindow.  NSCC's rules are not implemented yet: nic_new
 * says so once and runs NSCC configurations with the fixed window. */
#include "nic_impl.h"

void nic_cc_init(struct nic *nic, struct nic_group *g)
{
	g->cwnd = nic->a.cc == CC_NONE ? nic->a.max_cwnd : nic->a.initial_cwnd;
	if (nic->a.cc == CC_NSCC)
		g->cwnd = nic->a.max_cwnd;
	nic_cwnd_seen(nic, g, "new_group", 0);
}

void nic_cc_on_sack(struct nic *nic, struct nic_group *g, uint64_t acked, ps_t rtt, bool ecn,
		    ps_t now)
{
	(void)nic, (void)g, (void)acked, (void)rtt, (void)ecn, (void)now;
}

void nic_cc_on_loss(struct nic *nic, struct nic_group *g, uint32_t nominal, ps_t now)
{
	(void)nic, (void)g, (void)nominal, (void)now;
}

void nic_cc_on_trim_nack(struct nic *nic, struct nic_group *g, ps_t now)
{
	(void)nic, (void)g, (void)now;
}
