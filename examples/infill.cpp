#include<vector>
#include<string>
using namespace std;
int count_positive(vector<int> xs){
    int n = 0;
    for (int i = 0; i < xs.size(); i++) {
        if (<FILL>) n += 1;
    }
    return <FILL>;
}
