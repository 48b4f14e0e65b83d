import CZMQ
