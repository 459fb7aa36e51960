// Header-only access to the Linux Bluetooth socket ABI (no libbluetooth at run time:
// nothing here is linked, only constants and struct layouts are used).
#ifndef BLUESIFT_CBLUETOOTH_SHIM_H
#define BLUESIFT_CBLUETOOTH_SHIM_H

#include <sys/socket.h>

#if defined(__linux__) && __has_include(<bluetooth/bluetooth.h>) && __has_include(<bluetooth/hci.h>)
#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>
#else
// Same ABI as BlueZ's headers, for machines without libbluetooth-dev (and non-Linux
// builds, where opening hci:N then fails with EAFNOSUPPORT).
#ifndef AF_BLUETOOTH
#define AF_BLUETOOTH 31
#endif
#define BTPROTO_HCI 1
#define HCI_CHANNEL_RAW 0
#define HCI_CHANNEL_USER 1
struct sockaddr_hci {
    sa_family_t hci_family;
    unsigned short hci_dev;
    unsigned short hci_channel;
};
#endif

// Macros Swift cannot import as constants.
static inline int bluesift_af_bluetooth(void) { return AF_BLUETOOTH; }
static inline int bluesift_btproto_hci(void) { return BTPROTO_HCI; }
static inline int bluesift_hci_channel_user(void) { return HCI_CHANNEL_USER; }

#endif
