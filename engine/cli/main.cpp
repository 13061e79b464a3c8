// graphfuse command line (placeholder until the CLI lands).
#include <iostream>
int main() { std::cout << "graphfuse\n"; return 0; }
