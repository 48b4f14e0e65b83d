// MessagePack module
