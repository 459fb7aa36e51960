#!/usr/bin/env python3
"""Virtual LE controllers on one shared link, each speaking H4 on its own TCP port.

    controllers.py 127.0.0.1:9001 127.0.0.1:9002 [HOST:PORT[=BD_ADDR] ...]

An endpoint `unix:PATH[=BD_ADDR]` listens on a UNIX socket instead (transport `unix:PATH`).
Prints one line `READY <port> <port> ...` on stdout once every port listens (a UNIX
socket's path in its place).
Stops on SIGINT/SIGTERM, or when stdin closes if --exit-on-stdin-eof is given.

The stock Bumble virtual controller (bumble.controller.Controller) has gaps that a
central host written by us would trip over; RigController patches them (see README.md).
"""
from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import socket
import struct
import sys

from bumble import hci, ll
from bumble.controller import Connection, Controller
from bumble.core import PhysicalTransport
from bumble.link import LocalLink
from bumble.transport.common import PacketParser

log = logging.getLogger('rig.controllers')

# Reason code the peer sees when a host resets or goes away: from the radio's point of
# view the link just stops answering, so the peer's supervision timer fires.
REASON_CONNECTION_TIMEOUT = hci.HCI_ErrorCode.CONNECTION_TIMEOUT_ERROR  # 0x08
HOST_NUMBER_OF_COMPLETED_PACKETS = 0x0C35
# Vendor command (OGF 0x3F) a hostile device's host sends its controller: put a flood of
# notifications on the link. Parameters: connection handle, ATT value handle (u16 each),
# rate per second, duration in ms (u32 each). See RigController.flood.
FLOOD_OPCODE = hci.hci_vendor_command_op_code(0x0F1)


def default_bd_addr(index: int) -> str:
    # Distinct, recognisable public addresses (the stock controller uses 00:00:00:00:00:00
    # for all of them, which makes captures of two controllers ambiguous).
    return f'00:B1:5F:00:00:{index + 1:02X}'


class RigLink(LocalLink):
    """LocalLink that routes LE data by the address the connection was made with."""

    def send_acl_data(self, sender_controller, destination_address, transport, data):
        # Stock LocalLink labels LE data with the sender's *random* address. A host that
        # connected with its public address has a connection keyed by that public address
        # on the peer, so its data was silently dropped. Use the connection's own address.
        if transport == PhysicalTransport.LE:
            connection = sender_controller.le_connections.get(destination_address)
            destination = self.find_le_controller(destination_address)
            if connection is None or destination is None:
                log.warning('no LE route to %s', destination_address)
                return
            source = connection.self_address
            asyncio.get_running_loop().call_soon(
                destination.on_link_acl_data, source, transport, data
            )
            return
        super().send_acl_data(sender_controller, destination_address, transport, data)


class RigController(Controller):
    # Without the extended-advertising bit a legacy scan gets legacy LE Advertising
    # Reports (subevent 0x02) instead of Extended Advertising Reports (0x0D), and Bumble
    # hosts advertise with legacy commands. Periodic advertising depends on extended.
    le_features = Controller.le_features & ~(
        hci.LeFeatureMask.LE_EXTENDED_ADVERTISING | hci.LeFeatureMask.LE_PERIODIC_ADVERTISING
    )

    # Opcodes to refuse with Command Disallowed (--reject), to test how hosts take it.
    rejected: set[int] = set()

    # -- HCI from the host ---------------------------------------------------------------
    def on_hci_packet(self, packet):
        if isinstance(packet, hci.HCI_Command) and packet.op_code == FLOOD_OPCODE:
            self.start_flood(bytes(packet.parameters))
            return
        if isinstance(packet, hci.HCI_Command) and packet.op_code in self.rejected:
            log.warning('[%s] rejecting %s as asked', self.name, packet.name)
            self._send_hci_command_status(hci.HCI_ErrorCode.COMMAND_DISALLOWED_ERROR, packet.op_code)
            return
        # A malformed packet from the host under test must not kill the controller.
        try:
            super().on_hci_packet(packet)
        except Exception:  # noqa: BLE001 - log and keep serving
            log.exception('[%s] error handling %s', self.name, packet)

    def on_packet(self, packet: bytes) -> None:
        try:
            parsed = hci.HCI_Packet.from_bytes(packet)
        except Exception:  # noqa: BLE001
            log.warning('[%s] undecodable packet from host: %s', self.name, packet.hex())
            return
        self.on_hci_packet(parsed)

    def on_hci_command(self, command):
        # Stock behaviour returns status parameters, which are only sent for commands
        # Bumble knows to be "sync": an unknown or asynchronous unsupported command got no
        # answer at all and the host waited forever. Answer Command Status 0x01 instead
        # (Core Vol 4 Part E §4.5 allows Command Status for unknown commands).
        if command.op_code == HOST_NUMBER_OF_COMPLETED_PACKETS:
            return None  # never answered unless in error (Core Vol 4 Part E §7.3.40)
        log.warning('[%s] unsupported command %s', self.name, command.name)
        if isinstance(command, hci.HCI_SyncCommand):
            return hci.HCI_StatusReturnParameters(hci.HCI_ErrorCode.UNKNOWN_HCI_COMMAND_ERROR)
        self._send_hci_command_status(hci.HCI_ErrorCode.UNKNOWN_HCI_COMMAND_ERROR, command.op_code)
        return None

    def on_hci_read_rssi_command(self, command):
        # Listed as supported but answered "Unknown HCI Command" by the stock controller.
        # There is no radio: every link is at -50 dBm, as the advertising reports say.
        connection = self.find_connection_by_handle(command.handle)
        return hci.HCI_Read_RSSI_ReturnParameters(
            status=hci.HCI_ErrorCode.SUCCESS if connection else hci.HCI_ErrorCode.UNKNOWN_CONNECTION_IDENTIFIER_ERROR,
            handle=command.handle, rssi=-50 if connection else 0)

    def on_hci_reset_command(self, command):
        # Stock reset leaves links up: a host that restarts left the peer connected and
        # no longer advertising. A reset controller drops its links; the peer sees 0x08.
        self.drop_all_links()
        self.le_scan_enable = False
        self.pending_le_connection = None
        self.le_legacy_advertiser.stop()
        for adv_set in self.advertising_sets.values():
            adv_set.stop()
        self.advertising_sets.clear()
        self.event_mask = 0
        self.le_event_mask = 0
        return super().on_hci_reset_command(command)

    def on_hci_le_create_connection_cancel_command(self, command):
        # Stock cancel answers success but keeps the pending connection: no LE Connection
        # Complete ever comes and every later Create Connection is "Command Disallowed".
        # Core Vol 4 Part E §7.8.13: Command Complete, then LE Connection Complete 0x02.
        pending = self.pending_le_connection
        if pending is None:
            return hci.HCI_StatusReturnParameters(hci.HCI_ErrorCode.COMMAND_DISALLOWED_ERROR)
        self.pending_le_connection = None
        asyncio.get_running_loop().call_soon(lambda: self.send_hci_packet(
            hci.HCI_LE_Connection_Complete_Event(
                status=hci.HCI_ErrorCode.UNKNOWN_CONNECTION_IDENTIFIER_ERROR,
                connection_handle=0, role=hci.Role.CENTRAL,
                peer_address_type=pending.peer_address.address_type,
                peer_address=pending.peer_address, connection_interval=0,
                peripheral_latency=0, supervision_timeout=0, central_clock_accuracy=0)))
        return hci.HCI_StatusReturnParameters(hci.HCI_ErrorCode.SUCCESS)

    def on_hci_disconnect_command(self, command):
        # Stock answers "pending" for an unknown handle and then never completes, so the
        # host waits forever. Answer Unknown Connection Identifier (0x02) at once.
        handle = command.connection_handle
        if (self.find_connection_by_handle(handle) is None
                and self.find_classic_sco_link_by_handle(handle) is None
                and self.find_iso_link_by_handle(handle) is None):
            self._send_hci_command_status(
                hci.HCI_ErrorCode.UNKNOWN_CONNECTION_IDENTIFIER_ERROR, command.op_code)
            return None
        return super().on_hci_disconnect_command(command)

    # -- a notification flood (band_peripheral.py --hostile flood) -------------------------
    def start_flood(self, parameters: bytes) -> None:
        handle, value_handle, rate, duration_ms = struct.unpack('<HHII', parameters[:12])
        status = hci.HCI_ErrorCode.SUCCESS if self.find_connection_by_handle(handle) else \
            hci.HCI_ErrorCode.UNKNOWN_CONNECTION_IDENTIFIER_ERROR
        self.send_hci_packet(hci.HCI_Command_Complete_Event(
            num_hci_command_packets=1, command_opcode=FLOOD_OPCODE,
            return_parameters=hci.HCI_StatusReturnParameters(status)))
        if status == hci.HCI_ErrorCode.SUCCESS:
            asyncio.get_running_loop().create_task(self.flood(handle, value_handle, rate, duration_ms / 1000))

    async def flood(self, handle: int, value_handle: int, rate: int, seconds: float) -> None:
        """ATT Handle Value Notifications (Core 5.4 Vol 3 Part F §3.4.7.1), value = a u32
        counter, at `rate` per second for `seconds`, straight into the peer controller's H4
        stream as pre-built ACL packets, many per write. The path through Bumble's GATT server,
        host flow control and this controller's per-packet relay costs ~100 µs of Python per
        notification in each of two processes: ~2,300/s at most on this rig (README, Replay)."""
        mine = self.find_connection_by_handle(handle)
        peer = self.link.find_le_controller(mine.peer_address)
        theirs = peer.le_connections.get(mine.self_address) if peer else None
        if theirs is None:
            log.warning('[%s] flood: no peer connection', self.name)
            return
        # H4 ACL, PB 0b10 (first, automatically flushable), one L2CAP PDU on the ATT channel.
        head = struct.pack('<BHHHHBH', 0x02, theirs.handle | 0x2000, 11, 7, 0x0004, 0x1B, value_handle)
        total = int(rate * seconds)
        loop = asyncio.get_running_loop()
        start = loop.time()
        sent = 0
        while sent < total and theirs.handle in (c.handle for c in peer.le_connections.values()):
            due = min(total, int((loop.time() - start) * rate) + 1)
            batch = b''.join(head + struct.pack('<I', n) for n in range(sent, due))
            # Through the peer's own send queue: never between two fragments of another PDU.
            loop.call_soon(peer.host.on_packet, batch)
            sent = due
            await asyncio.sleep(0.002)
        took = loop.time() - start
        log.warning('FLOOD sent %d notifications in %.2f s (%.0f/s), asked %d/s for %.1f s',
                    sent, took, sent / took if took else 0, rate, seconds)

    def drop_all_links(self) -> None:
        for connection in list(self.le_connections.values()):
            connection.send_ll_control_pdu(ll.TerminateInd(REASON_CONNECTION_TIMEOUT))
            del self.le_connections[connection.peer_address]
        for peer in list(self.classic_connections):
            del self.classic_connections[peer]

    # -- data and advertising from the link ----------------------------------------------
    def on_link_acl_data(self, sender_address, transport, data: bytes) -> None:
        # Stock controller hands each L2CAP PDU to the host in one ACL packet of any size.
        # A real LE controller delivers at most its buffer size (27 bytes without Data
        # Length Extension) per packet: split so the host's reassembly is exercised.
        if transport != PhysicalTransport.LE:
            return super().on_link_acl_data(sender_address, transport, data)
        connection: Connection | None = self.le_connections.get(sender_address)
        if connection is None:
            log.warning('[%s] no connection for %s', self.name, sender_address)
            return
        size = self.le_acl_data_packet_length
        for offset in range(0, len(data), size):
            chunk = data[offset:offset + size]
            pb_flag = 2 if offset == 0 else 1  # first automatically flushable / continuing
            self.send_hci_packet(hci.HCI_AclDataPacket(connection.handle, pb_flag, 0, len(chunk), chunk))

    def on_advertising_pdu(self, pdu) -> None:
        # Stock legacy path reports a SCAN_RSP for every ADV_IND, even for a passive scan,
        # and fills it with the advertising data. Report the advertiser's real scan
        # response data, only for an active scan, only when there is some.
        if self.le_scan_enable and isinstance(pdu, ll.AdvInd) and not (
            self.le_features & hci.LeFeatureMask.LE_EXTENDED_ADVERTISING
        ):
            self.send_hci_packet(hci.HCI_LE_Advertising_Report_Event([
                hci.HCI_LE_Advertising_Report_Event.Report(
                    event_type=hci.HCI_LE_Advertising_Report_Event.EventType.ADV_IND,
                    address_type=pdu.advertiser_address.address_type,
                    address=pdu.advertiser_address, data=pdu.data, rssi=-50)
            ]))
            scan_response = self._scan_response_of(pdu.advertiser_address)
            if self.le_scan_type == 1 and scan_response:
                self.send_hci_packet(hci.HCI_LE_Advertising_Report_Event([
                    hci.HCI_LE_Advertising_Report_Event.Report(
                        event_type=hci.HCI_LE_Advertising_Report_Event.EventType.SCAN_RSP,
                        address_type=pdu.advertiser_address.address_type,
                        address=pdu.advertiser_address, data=scan_response, rssi=-50)
                ]))
            pending = self.pending_le_connection
            if pending and pending.peer_address == pdu.advertiser_address:
                self.create_le_connection(pdu.advertiser_address)
            return
        super().on_advertising_pdu(pdu)

    def _scan_response_of(self, address) -> bytes:
        for other in self.link.controllers:
            adv = other.le_legacy_advertiser
            if adv.enabled and adv.address == address:
                return bytes(adv.scan_response_data)
        return b''


class H4Server:
    """One H4 host per TCP port. A new host gets a fresh parser; a host that goes away
    counts as a controller power-off (links dropped, peer sees 0x08). A second concurrent
    client is refused rather than allowed to steal the first one's events."""

    def __init__(self, controller: RigController):
        self.controller = controller
        self.client: asyncio.Transport | None = None

    def on_packet(self, packet: bytes) -> None:  # controller -> host
        if self.client is not None:
            self.client.write(packet)

    def protocol(self):
        server = self

        class Protocol(asyncio.Protocol):
            def connection_made(self, transport):
                if server.client is not None:
                    log.warning('[%s] second host refused', server.controller.name)
                    self.refused = True
                    transport.close()
                    return
                self.refused = False
                server.client = transport
                self.parser = PacketParser(server.controller)

            def data_received(self, data):
                if self.refused:
                    return
                try:
                    self.parser.feed_data(data)
                except Exception:  # noqa: BLE001
                    log.warning('[%s] bad H4 stream, resyncing', server.controller.name)
                    self.parser.reset()

            def connection_lost(self, exc):
                if self.refused:
                    return
                server.client = None
                server.controller.on_hci_reset_command(hci.HCI_Reset_Command())

        return Protocol


def parse_endpoint(spec: str, index: int) -> tuple[str, int, str]:
    """(host, port, BD_ADDR); a UNIX socket: ('unix', 0, BD_ADDR) with the path as host."""
    endpoint, _, addr = spec.partition('=')
    if endpoint.startswith('unix:'):
        return endpoint[5:], 0, addr or default_bd_addr(index)
    host, _, port = endpoint.rpartition(':')
    return host or '127.0.0.1', int(port), addr or default_bd_addr(index)


async def start_controllers(specs: list[str]):
    """Starts one controller per spec on one link; returns (controllers, servers)."""
    link = RigLink()
    controllers, servers = [], []
    loop = asyncio.get_running_loop()
    for index, spec in enumerate(specs):
        host, port, bd_addr = parse_endpoint(spec, index)
        controller = RigController(f'C{index}:{port or host}', link=link,
                                   public_address=hci.Address(bd_addr, hci.Address.PUBLIC_DEVICE_ADDRESS))
        h4 = H4Server(controller)
        controller.host = h4
        if port == 0:
            servers.append(await loop.create_unix_server(h4.protocol(), host))
        else:
            servers.append(await loop.create_server(h4.protocol(), host, port, reuse_address=True))
        controllers.append(controller)
    return controllers, servers


async def amain(args) -> None:
    RigController.rejected = {int(x, 16) for x in args.reject}
    controllers, servers = await start_controllers(args.endpoints)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    if args.exit_on_stdin_eof:
        loop.connect_read_pipe(lambda: _EofProtocol(stop), sys.stdin)
    if args.watch_pid:
        loop.create_task(_watch_pid(args.watch_pid, stop))
    ports = ' '.join(str(s.sockets[0].getsockname()[1]) if s.sockets[0].family != socket.AF_UNIX
                     else s.sockets[0].getsockname() for s in servers)
    print(f'READY {ports}', flush=True)
    try:
        if args.timeout:
            await asyncio.wait_for(stop.wait(), args.timeout)
        else:
            await stop.wait()
    except asyncio.TimeoutError:
        log.warning('lifetime of %ss reached, exiting', args.timeout)
    for server in servers:
        server.close()


async def _watch_pid(pid: int, stop: asyncio.Event) -> None:
    import os
    while not stop.is_set():
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            stop.set()
            return
        await asyncio.sleep(0.5)


class _EofProtocol(asyncio.Protocol):
    def __init__(self, stop: asyncio.Event):
        self.stop = stop

    def connection_lost(self, exc):
        self.stop.set()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('endpoints', nargs='+', help='HOST:PORT[=BD_ADDR], one per controller')
    parser.add_argument('--timeout', type=float, default=0, help='exit after this many seconds (0: never)')
    parser.add_argument('--watch-pid', type=int, default=0, help='exit when this process is gone')
    parser.add_argument('--exit-on-stdin-eof', action='store_true', help='exit when stdin closes')
    parser.add_argument('--reject', action='append', default=[], metavar='OPCODE',
                        help='answer this HCI command (hex, e.g. 0x200d) with Command Disallowed')
    parser.add_argument('--log-level', default='WARNING')
    args = parser.parse_args()
    logging.basicConfig(level=args.log_level.upper(), format='%(asctime)s %(name)s %(levelname)s %(message)s')
    asyncio.run(amain(args))


if __name__ == '__main__':
    # Swift's Process starts children with signals blocked: unblock so `stop` can TERM us.
    import signal as _signal
    _signal.pthread_sigmask(_signal.SIG_UNBLOCK, {_signal.SIGTERM, _signal.SIGINT})
    main()
