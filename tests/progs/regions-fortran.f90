! SPDX-License-Identifier: MIT
! The regions known answer from Fortran: pcollect's API called by its Fortran names.
program regions_fortran
  implicit none
  call burn_ms(300d0)                    ! paused (pcollect -start-paused)
  call pcollect_resume()
  call burn_ms(200d0)                    ! in no region
  call pcollect_region_begin('solve')
  call pcollect_region_begin('small')
  call burn_ms(300d0)
  call pcollect_region_end()
  call pcollect_region_begin('large   ') ! trailing blanks are not part of the name
  call burn_ms(600d0)
  call pcollect_region_end()
  call pcollect_region_end()
  call pcollect_pause()
  call burn_ms(300d0)                    ! paused again
  print '(a)', 'regions done'
end program regions_fortran
