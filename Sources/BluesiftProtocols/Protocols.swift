/// Every protocol module, in the order their layers are declared (JSON Lines members, the
/// `-v` tree). A new protocol family: its folder(s), one line here, the README
/// (docs/DESIGN.md, "Adding a protocol").
public enum Protocols {
    public static let all: [any ProtocolModule.Type] = [
        SDP.self, RFCOMM.self, AVDTP.self, AVCTP.self, // Classic/
        LEAudioISO.self, LEAudio.self, // LEAudio/
        Mesh.self // Mesh/
    ]
}
