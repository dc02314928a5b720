/*
 * bad_rkey: an RDMA WRITE with a wrong rkey, between two RC queue pairs over libibverbs, for
 * tests/roce-qemu. No distribution tool posts a bad key, so this is the smallest program that
 * does: the pair's addresses are exchanged over TCP as ibv_rc_pingpong does (port 18515), then
 *   client  posts one signalled RDMA WRITE of 64 bytes to the server's buffer with the server's
 *           rkey XOR 0x00550000 (a key the server never registered) and expects the requester's
 *           completion IBV_WC_REM_ACCESS_ERR (the responder NAKs a key it does not hold with
 *           the remote access error NAK, AETH syndrome 0x62; ocrdma reports the CQE status
 *           OCRDMA_CQE_REM_ACCESS_ERR, 10 in ocrdma_sli.h's enum)
 *   server  waits for the client's verdict, then checks that not one byte of its buffer changed
 * Usage: bad_rkey -d DEV -g GID_INDEX [SERVER_IPV4]   (no address: the server)
 * Prints one "bad_rkey: ..." result line; exits 0 when its side saw what it expects, 1 when not,
 * 2 on a setup error (with the failing call).
 */
#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define PORT 18515
#define BUF_LEN 4096
#define WRITE_LEN 64
#define BAD_KEY_XOR 0x00550000u

struct peer {
	uint32_t qpn, psn, rkey;
	uint64_t addr;
	union ibv_gid gid;
};

static int fail(const char *what)
{
	fprintf(stderr, "bad_rkey: %s failed\n", what);
	exit(2);
}

/* Both ends send their own record and read the other's: one TCP connection, client first. */
static int exchange(const char *server, struct peer *mine, struct peer *theirs)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(PORT) };
	int fd = socket(AF_INET, SOCK_STREAM, 0), conn, one = 1;

	if (fd < 0)
		fail("socket");
	if (server) {
		if (inet_pton(AF_INET, server, &sa.sin_addr) != 1)
			fail("inet_pton");
		for (int i = 0; connect(fd, (struct sockaddr *)&sa, sizeof(sa)); i++) {
			if (i == 50)
				fail("connect");
			usleep(200000);
		}
		conn = fd;
	} else {
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 1))
			fail("bind/listen");
		conn = accept(fd, NULL, NULL);
		if (conn < 0)
			fail("accept");
		close(fd);
	}
	if (write(conn, mine, sizeof(*mine)) != sizeof(*mine) ||
	    read(conn, theirs, sizeof(*theirs)) != sizeof(*theirs))
		fail("the address exchange");
	return conn;
}

static void connect_qp(struct ibv_qp *qp, const struct peer *p, int gidx, uint32_t my_psn)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = IBV_MTU_1024,
		.dest_qp_num = p->qpn,
		.rq_psn = p->psn,
		.max_dest_rd_atomic = 1,
		.min_rnr_timer = 12,
		.ah_attr = {
			.is_global = 1,
			.grh = { .dgid = p->gid, .sgid_index = gidx, .hop_limit = 1 },
			.port_num = 1,
		},
	};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		fail("ibv_modify_qp to RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = my_psn;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
		fail("ibv_modify_qp to RTS");
}

int main(int argc, char **argv)
{
	const char *dev_name = NULL, *server = NULL;
	int gidx = 0, opt, n, conn, ok;
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	struct peer mine = { 0 }, theirs;
	char verdict = 0;
	static uint8_t buf[BUF_LEN];

	while ((opt = getopt(argc, argv, "d:g:")) != -1) {
		if (opt == 'd')
			dev_name = optarg;
		else if (opt == 'g')
			gidx = atoi(optarg);
		else
			return 2;
	}
	if (optind < argc)
		server = argv[optind];
	list = ibv_get_device_list(&n);
	for (int i = 0; list && i < n; i++)
		if (!dev_name || !strcmp(ibv_get_device_name(list[i]), dev_name))
			ctx = ctx ? ctx : ibv_open_device(list[i]);
	if (!ctx)
		fail("ibv_open_device");
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = pd ? ibv_create_cq(ctx, 4, NULL, NULL, 0) : NULL;
	struct ibv_mr *mr = cq ? ibv_reg_mr(pd, buf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE |
					    IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ) : NULL;
	struct ibv_qp_init_attr qia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 2, .max_recv_wr = 2, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = mr ? ibv_create_qp(pd, &qia) : NULL;
	struct ibv_qp_attr init = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
	};

	if (!qp)
		fail("creating the PD, CQ, MR and QP");
	if (ibv_modify_qp(qp, &init, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		fail("ibv_modify_qp to INIT");
	if (ibv_query_gid(ctx, 1, gidx, &mine.gid))
		fail("ibv_query_gid");
	srand48(getpid() * time(NULL));
	mine.qpn = qp->qp_num;
	mine.psn = lrand48() & 0xffffff;
	mine.rkey = mr->rkey;
	mine.addr = (uintptr_t)buf;
	conn = exchange(server, &mine, &theirs);
	connect_qp(qp, &theirs, gidx, mine.psn);

	if (!server) {
		/* The server's verdict: its buffer after the client's write has completed. */
		if (read(conn, &verdict, 1) != 1)
			fail("reading the client's verdict");
		ok = 1;
		for (int i = 0; i < BUF_LEN; i++)
			ok &= buf[i] == 0;
		printf("bad_rkey: server: buffer %s after the client's write (client saw %s)\n",
		       ok ? "untouched" : "CHANGED", verdict == 'y' ? "its error" : "no error");
		return ok ? 0 : 1;
	}

	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = WRITE_LEN, .lkey = mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 7, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = theirs.addr, .rkey = theirs.rkey ^ BAD_KEY_XOR },
	}, *bad;
	struct ibv_wc wc;

	memset(buf, 0xab, WRITE_LEN);
	if (ibv_post_send(qp, &wr, &bad))
		fail("ibv_post_send");
	n = 0;
	for (int i = 0; i < 20000 && n == 0; i++) {   /* 20 s at most */
		n = ibv_poll_cq(cq, 1, &wc);
		if (n == 0)
			usleep(1000);
	}
	if (n < 0)
		fail("ibv_poll_cq");
	ok = n == 1 && wc.wr_id == 7 && wc.status == IBV_WC_REM_ACCESS_ERR;
	if (n == 1)
		printf("bad_rkey: client: rkey 0x%x instead of 0x%x: completion status %s (%d)\n",
		       theirs.rkey ^ BAD_KEY_XOR, theirs.rkey, ibv_wc_status_str(wc.status), wc.status);
	else
		printf("bad_rkey: client: no completion in 20 s\n");
	verdict = ok ? 'y' : 'n';
	if (write(conn, &verdict, 1) != 1)
		fail("sending the verdict");
	return ok ? 0 : 1;
}
