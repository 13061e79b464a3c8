

mMergem*
T0