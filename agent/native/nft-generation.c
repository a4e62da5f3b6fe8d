/*
 * proxyscope-nft-generation: prints the nf_tables ruleset generation id of the current network
 * namespace, one decimal number and a newline, and exits 0.
 *
 * Why a C program in a TypeScript agent: the kernel bumps this id on every committed nf_tables
 * transaction (nft, iptables-nft, kube-proxy, firewalld, Calico, Docker alike) and not on a read or a
 * packet, so "unchanged" proves that no nftables or iptables-nft state changed since an earlier read.
 * It is answered to one NFT_MSG_GETGEN netlink request; Node cannot open a netlink socket, and no
 * tool of the nftables or iptables packages prints it (`nft monitor` prints it only while listening
 * to every event). At 10,000 Services the reads it lets a scan skip cost seconds of CPU
 * (bench/results/nft-gate.md); this costs one round trip.
 *
 * No arguments, no environment, no files: one request, one answer. Errors go to stderr with exit 2;
 * a kernel without nf_tables exits 3 ("not supported"), told apart so the agent can say so.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>

static int fail(const char *what, int err)
{
	fprintf(stderr, "proxyscope-nft-generation: %s: %s\n", what, strerror(err));
	return err == EPROTONOSUPPORT || err == EOPNOTSUPP || err == ENOENT ? 3 : 2;
}

int main(int argc, char **argv)
{
	(void)argv;
	if (argc != 1) {
		fprintf(stderr, "usage: proxyscope-nft-generation (no arguments)\n");
		return 2;
	}
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
	if (fd < 0)
		return fail("socket(AF_NETLINK, NETLINK_NETFILTER)", errno);
	/* The agent's own deadline kills a hung call; this only keeps a lost answer from hanging here. */
	struct timeval tv = { .tv_sec = 5, .tv_usec = 0 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);

	struct {
		struct nlmsghdr nh;
		struct nfgenmsg nf;
	} req;
	memset(&req, 0, sizeof req);
	req.nh.nlmsg_len = sizeof req;
	req.nh.nlmsg_type = (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_GETGEN;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	req.nh.nlmsg_seq = 1;
	req.nf.nfgen_family = AF_UNSPEC;
	req.nf.version = NFNETLINK_V0;
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	if (sendto(fd, &req, sizeof req, 0, (struct sockaddr *)&kernel, sizeof kernel) < 0)
		return fail("send NFT_MSG_GETGEN", errno);

	long long gen = -1;
	/* The answer is one NEWGEN message, then the ACK; anything else in between is ignored. */
	for (int round = 0; round < 8; round++) {
		char buf[8192] __attribute__((aligned(NLMSG_ALIGNTO)));
		ssize_t n = recv(fd, buf, sizeof buf, 0);
		if (n < 0)
			return fail("receive", errno);
		size_t left = (size_t)n;
		for (struct nlmsghdr *nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, left); nh = NLMSG_NEXT(nh, left)) {
			if (nh->nlmsg_seq != req.nh.nlmsg_seq)
				continue;
			if (nh->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(nh);
				if (e->error != 0)
					return fail("NFT_MSG_GETGEN", -e->error);
				if (gen < 0) {
					fprintf(stderr, "proxyscope-nft-generation: the kernel acknowledged without a generation id\n");
					return 2;
				}
				printf("%lld\n", gen);
				return fflush(stdout) == 0 ? 0 : 2;
			}
			if ((nh->nlmsg_type & 0xff) != NFT_MSG_NEWGEN)
				continue;
			int attrs = (int)nh->nlmsg_len - NLMSG_LENGTH(NLMSG_ALIGN(sizeof(struct nfgenmsg)));
			const struct nlattr *a =
				(const struct nlattr *)((const char *)NLMSG_DATA(nh) + NLMSG_ALIGN(sizeof(struct nfgenmsg)));
			while (attrs >= (int)sizeof *a && a->nla_len >= sizeof *a && a->nla_len <= attrs) {
				if ((a->nla_type & NLA_TYPE_MASK) == NFTA_GEN_ID && a->nla_len >= NLA_HDRLEN + 4) {
					uint32_t be;
					memcpy(&be, (const char *)a + NLA_HDRLEN, sizeof be);
					gen = ntohl(be);
				}
				attrs -= NLA_ALIGN(a->nla_len);
				a = (const struct nlattr *)((const char *)a + NLA_ALIGN(a->nla_len));
			}
		}
	}
	fprintf(stderr, "proxyscope-nft-generation: no acknowledgement from the kernel\n");
	return 2;
}
