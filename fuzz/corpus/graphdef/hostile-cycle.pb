

aIdentityb*
T0

bIdentitya*
T0