/*
 * bench_cpu_memory.c: where the CPU sort's time goes in fresh memory.  Times
 * gs_cpu_sort of n random int4 (default 10^7) with its scratch reused, freshly
 * malloc'd, huge-page advised, touched page by page beforehand, populated with
 * madvise(MADV_POPULATE_WRITE) or mmap(MAP_POPULATE); and a memcpy into fresh
 * and touched memory, and the cost of a first touch per page.  Prints the
 * machine's transparent-huge-page settings.  Median of 7, milliseconds.
 *
 *   bench_cpu_memory [n]
 *
 * bench/NOTES-sql.md uses it to tell page faults from the sort's own memory
 * throughput (bench/results/gpu-host-h100-2026-11-23/cpu-sort-probe.txt).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <time.h>
#include <sys/mman.h>
#include "gpusort.h"
static volatile long sink;
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e3+t.tv_nsec/1e6;}
static int cmp(const void*a,const void*b){return *(double*)a<*(double*)b?-1:*(double*)a>*(double*)b;}
static double med(double*v,int n){qsort(v,n,sizeof(double),cmp);return v[n/2];}
int main(int argc,char**argv){
  size_t n = argc>1? strtoull(argv[1],0,10):10000000; int runs=7;
  size_t nb=n*4, sb=gs_cpu_scratch_bytes(GS_INT4,n,false);
  int32_t*pristine=malloc(nb); uint64_t x=88172645463325252ull;
  for(size_t i=0;i<n;i++){x^=x<<13;x^=x>>7;x^=x<<17;pristine[i]=(int32_t)x;}
  int32_t*keys=malloc(nb); memset(keys,0,nb);
  void*reused=malloc(sb); memset(reused,0,sb);
  gs_error err; double t[4][16], tpop[16], tpopsort[16], tcopy_fresh[16], tcopy_touched[16], tfault[16];
  for(int r=0;r<runs;r++){
    for(int mode=0;mode<4;mode++){
      memcpy(keys,pristine,nb);
      void*s; double t0=now();
      if(mode==0) s=reused;
      else if(mode==1) s=malloc(sb);
      else if(mode==2){ s=aligned_alloc(2<<20,(sb+(2<<20)-1)&~((size_t)(2<<20)-1)); madvise(s,(sb+(2<<20)-1)&~((size_t)(2<<20)-1),MADV_HUGEPAGE);}
      else { s=malloc(sb); for(size_t o=0;o<sb;o+=4096) ((volatile char*)s)[o]=0; }
      gs_status st=gs_cpu_sort(GS_INT4,keys,n,false,s,NULL,NULL,&err);
      t[mode][r]=now()-t0;
      if(st!=GS_OK){printf("error %s\n",err.message);return 1;}
      for(size_t i=1;i<n;i++) if(keys[i-1]>keys[i]){printf("not sorted\n");return 1;}
      if(mode) free(s);
    }
    volatile int32_t*f=malloc(nb); double t0=now(); memcpy((void*)f,pristine,nb); tcopy_fresh[r]=now()-t0; sink+=f[n/3];
    t0=now(); memcpy((void*)f,pristine,nb); tcopy_touched[r]=now()-t0; sink+=f[n/2]; free((void*)f);
    t0=now(); void*pm=mmap(NULL,sb,PROT_READ|PROT_WRITE,MAP_PRIVATE|MAP_ANONYMOUS|MAP_POPULATE,-1,0); tpop[r]=now()-t0;
    memcpy(keys,pristine,nb); t0=now(); gs_cpu_sort(GS_INT4,keys,n,false,pm,NULL,NULL,&err); tpopsort[r]=now()-t0; munmap(pm,sb);
    {char*g=malloc(nb); t0=now(); for(size_t o=0;o<nb;o+=4096) ((volatile char*)g)[o]=0; tfault[r]=now()-t0; free(g);}
  }
  printf("n=%zu int4, median of %d, ms\n", n, runs);
  printf("sort, scratch reused (touched before): %.1f\n", med(t[0],runs));
  printf("sort, fresh malloc scratch:            %.1f\n", med(t[1],runs));
  printf("sort, fresh 2MiB-aligned MADV_HUGEPAGE: %.1f\n", med(t[2],runs));
  printf("sort, fresh malloc + sequential prefault (included): %.1f\n", med(t[3],runs));
  printf("memcpy %zu MB into fresh malloc: %.1f; into touched: %.1f; sequential first touch only: %.1f (%.2f us/page)\n", nb>>20, med(tcopy_fresh,runs), med(tcopy_touched,runs), med(tfault,runs), med(tfault,runs)*1e3/(nb/4096));
  { double a[16], b[16], c[16];
    for(int r=0;r<runs;r++){
      void*m=malloc(sb); double t0=now(); int rc=madvise((void*)(((uintptr_t)m+4095)&~(uintptr_t)4095),(sb-8192)&~(size_t)4095,23/*MADV_POPULATE_WRITE*/); a[r]=now()-t0;
      if(rc) printf("MADV_POPULATE_WRITE failed\n");
      memcpy(keys,pristine,nb); t0=now(); gs_cpu_sort(GS_INT4,keys,n,false,m,NULL,NULL,&err); b[r]=now()-t0; free(m);
      size_t al=(sb+(2<<20)-1)&~((size_t)(2<<20)-1); m=aligned_alloc(2<<20,al); t0=now(); madvise(m,al,MADV_HUGEPAGE); madvise(m,al,23); c[r]=now()-t0; free(m);
    }
    printf("malloc + MADV_POPULATE_WRITE (4 KiB pages): populate %.1f, sort %.1f; hugepage advice + populate: %.1f\n", med(a,runs), med(b,runs), med(c,runs));
  }
  printf("mmap MAP_POPULATE of the scratch: %.1f, then the sort in it: %.1f\n", med(tpop,runs), med(tpopsort,runs));
  FILE*fp; char line[256];
  const char*files[]={"/sys/kernel/mm/transparent_hugepage/enabled","/sys/kernel/mm/transparent_hugepage/defrag","/proc/sys/vm/overcommit_memory"};
  for(int i=0;i<3;i++){ if((fp=fopen(files[i],"r"))){ if(fgets(line,sizeof line,fp)) printf("%s: %s",files[i],line); fclose(fp);} }
  return (int)(sink&0);
}
